package testpki

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
)

// EndpointSign is the sign endpoint's name for WorkloadServer.Calls and
// SetFailure.
const EndpointSign = "sign"

// WorkloadModuleKey is the module's primary key that the WorkloadServer signs
// with, so that tests can check signatures. The real daemon keeps it to
// itself; the secondary key is this one reversed.
var WorkloadModuleKey = []byte("edgegrid-test-module-primary-key")

// ModuleKey returns the key the sign endpoint uses for keyID, or nil when
// the daemon would not know keyID.
func ModuleKey(keyID string) []byte {
	switch keyID {
	case "primary":
		return WorkloadModuleKey
	case "secondary":
		k := []byte(string(WorkloadModuleKey))
		for i, j := 0, len(k)-1; i < j; i, j = i+1, j-1 {
			k[i], k[j] = k[j], k[i]
		}
		return k
	}
	return nil
}

// Signed returns the data of every request the sign endpoint signed, in
// order.
func (s *WorkloadServer) Signed() [][]byte {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([][]byte(nil), s.signed...)
}

// sign implements POST /modules/{m}/genid/{g}/sign as the daemon does: the
// body is {"keyId", "algo", "data"} with keyId primary or secondary, algo
// HMACSHA256 and data base64; the answer is 200 {"digest": base64}.
func (s *WorkloadServer) sign(w http.ResponseWriter, r *http.Request) {
	var req struct {
		KeyID *string `json:"keyId"`
		Algo  *string `json:"algo"`
		Data  *string `json:"data"`
	}
	if err := json.NewDecoder(io.LimitReader(r.Body, 1<<16)).Decode(&req); err != nil {
		writeMessage(w, http.StatusBadRequest, "invalid request body")
		return
	}
	switch {
	case req.KeyID == nil || req.Algo == nil || req.Data == nil:
		writeMessage(w, http.StatusBadRequest, "keyId, algo and data are required")
		return
	case *req.Algo != "HMACSHA256":
		writeMessage(w, http.StatusBadRequest, "invalid algo")
		return
	}
	key := ModuleKey(*req.KeyID)
	if key == nil {
		writeMessage(w, http.StatusNotFound, "key not found")
		return
	}
	data, err := base64.StdEncoding.DecodeString(*req.Data)
	if err != nil {
		writeMessage(w, http.StatusBadRequest, "data is not base64")
		return
	}
	mac := hmac.New(sha256.New, key)
	mac.Write(data)
	s.mu.Lock()
	s.signed = append(s.signed, data)
	s.mu.Unlock()
	writeJSON(w, http.StatusOK, map[string]string{"digest": base64.StdEncoding.EncodeToString(mac.Sum(nil))})
}
