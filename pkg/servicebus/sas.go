package servicebus

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"net/url"
	"strconv"
	"time"
)

// SASToken returns the Authorization value for resource (an entity URI),
// signed with the connection string's key and valid until expiry:
//
//	SharedAccessSignature sr=<urlencoded resource>&sig=<urlencoded signature>&se=<unix expiry>&skn=<key name>
//
// The signature is the base64 HMAC-SHA256, keyed with the key's text, of the
// URL-encoded resource, a newline and the expiry.
func SASToken(resource, keyName, key string, expiry time.Time) string {
	sr := url.QueryEscape(resource)
	se := strconv.FormatInt(expiry.Unix(), 10)
	mac := hmac.New(sha256.New, []byte(key))
	mac.Write([]byte(sr + "\n" + se))
	sig := base64.StdEncoding.EncodeToString(mac.Sum(nil))
	return "SharedAccessSignature sr=" + sr + "&sig=" + url.QueryEscape(sig) + "&se=" + se + "&skn=" + url.QueryEscape(keyName)
}
