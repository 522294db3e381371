package edgehub

import (
	"context"
	"encoding/base64"
	"strconv"
	"time"

	"github.com/edgegrid/edgegrid/pkg/edgehub/mqtttopic"
)

// Signer signs data with the module's key: the workload API's sign call
// (workload.Client).
type Signer interface {
	Sign(ctx context.Context, keyID string, data []byte) ([]byte, error)
}

// SASToken returns the password a module presents to edgeHub: a token for
// the resource <hubHostName>/devices/<deviceID>/modules/<moduleID> valid
// until expiry,
//
//	SharedAccessSignature sr=<urlencoded resource>&sig=<urlencoded signature>&se=<unix expiry>
//
// where the signature is the base64 of what signer returns for the encoded
// resource, a newline and the expiry. The encoding is .NET's
// WebUtility.UrlEncode, the one edgeHub checks against.
func SASToken(ctx context.Context, signer Signer, hubHostName, deviceID, moduleID string, expiry time.Time) (string, error) {
	sr := urlEncode(hubHostName + "/devices/" + deviceID + "/modules/" + moduleID)
	se := strconv.FormatInt(expiry.Unix(), 10)
	digest, err := signer.Sign(ctx, "primary", []byte(sr+"\n"+se))
	if err != nil {
		return "", err
	}
	return "SharedAccessSignature sr=" + sr + "&sig=" + urlEncode(base64.StdEncoding.EncodeToString(digest)) + "&se=" + se, nil
}

// urlEncode is .NET's WebUtility.UrlEncode: letters, digits and -_.!*() stay,
// a space becomes '+', every other byte %XX with upper-case hex.
func urlEncode(s string) string {
	const hex = "0123456789ABCDEF"
	n := 0
	for i := 0; i < len(s); i++ {
		if !mqtttopic.Unreserved(s[i]) && s[i] != ' ' {
			n++
		}
	}
	if n == 0 {
		return replaceSpaces(s)
	}
	b := make([]byte, 0, len(s)+2*n)
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case mqtttopic.Unreserved(c):
			b = append(b, c)
		case c == ' ':
			b = append(b, '+')
		default:
			b = append(b, '%', hex[c>>4], hex[c&0xf])
		}
	}
	return string(b)
}

func replaceSpaces(s string) string {
	for i := 0; i < len(s); i++ {
		if s[i] == ' ' {
			b := []byte(s)
			for j := i; j < len(b); j++ {
				if b[j] == ' ' {
					b[j] = '+'
				}
			}
			return string(b)
		}
	}
	return s
}
