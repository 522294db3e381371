package workload

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"net/http"
	"net/url"
)

// Sign asks the daemon to sign data with the module's key keyID ("primary"
// or "secondary") using HMAC-SHA256
// (POST /modules/{moduleId}/genid/{generationId}/sign) and returns the
// digest. The key never leaves the daemon; this is how a module makes the
// SAS token it authenticates to edgeHub with. It returns an *Error when the
// daemon answers with a status other than 200.
func (c *Client) Sign(ctx context.Context, keyID string, data []byte) ([]byte, error) {
	const op = "sign"
	if c.generationID == "" {
		return nil, errors.New("workload: sign: module generation id is empty")
	}
	body := struct {
		KeyID string `json:"keyId"`
		Algo  string `json:"algo"`
		Data  string `json:"data"`
	}{KeyID: keyID, Algo: "HMACSHA256", Data: base64.StdEncoding.EncodeToString(data)}
	var resp struct {
		Digest string `json:"digest"`
	}
	path := "/modules/" + url.PathEscape(c.moduleID) + "/genid/" + url.PathEscape(c.generationID) + "/sign"
	if err := c.do(ctx, op, http.MethodPost, path, body, http.StatusOK, &resp); err != nil {
		return nil, err
	}
	digest, err := base64.StdEncoding.DecodeString(resp.Digest)
	if err != nil || len(digest) == 0 {
		return nil, fmt.Errorf("workload: %s: the digest is not base64", op)
	}
	return digest, nil
}
