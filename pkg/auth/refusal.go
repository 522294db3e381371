package auth

import "strings"

// kinds is a set of the kinds of credential a broker takes.
type kinds uint8

const (
	certKind kinds = 1 << iota
	keyKind
	tokenKind
)

// state is what a refusal can tell of one kind of credential.
type state uint8

const (
	untold  state = iota // nothing known, or nothing to say
	missing              // not presented
	refused              // presented and refused
)

// challenges are the WWW-Authenticate challenges of the kinds of
// credential, in the order a 401 names them. Certificates have no HTTP
// scheme of their own: the name says what to present.
var challenges = []struct {
	kind   kinds
	scheme string
}{
	{certKind, "ClientCertificate"},
	{keyKind, `SharedAccessKey header="aeg-sas-key"`},
	{tokenKind, `SharedAccessSignature header="aeg-sas-token"`},
}

// Failure is the error of a refused request: no credential it presented is
// good for it. errors.Is(err, ErrUnauthorized) holds for it. Its Message
// and Challenges tell the client which kinds of credential the broker takes
// and, where the broker can tell, which was missing or refused; they never
// hold a credential.
type Failure struct {
	// Kind is one of the Fail* constants: the first credential presented
	// that was refused, in the order SAS key, SAS token, client
	// certificate.
	Kind string

	accepts  kinds
	states   [3]state // by kind: certificate, key, token
	findings []string // for the client, in the order noted
}

func (f *Failure) Error() string { return "auth: unauthorized (" + f.Kind + ")" }

// Is makes a Failure match ErrUnauthorized.
func (f *Failure) Is(target error) bool { return target == ErrUnauthorized }

// AuthFailureReason returns Kind; the HTTP layer reads it through an
// interface.
func (f *Failure) AuthFailureReason() string { return f.Kind }

// note records what was found of kind k, and the sentence that says so.
func (f *Failure) note(k kinds, s state, finding string) {
	switch k {
	case certKind:
		f.states[0] = s
	case keyKind:
		f.states[1] = s
	case tokenKind:
		f.states[2] = s
	}
	if finding != "" {
		f.findings = append(f.findings, finding)
	}
}

func (f *Failure) state(k kinds) state {
	switch k {
	case certKind:
		return f.states[0]
	case keyKind:
		return f.states[1]
	}
	return f.states[2]
}

// Challenges returns the values of the WWW-Authenticate headers of the
// 401: one challenge per kind of credential the broker takes
// (ClientCertificate, SharedAccessKey, SharedAccessSignature, with the
// header each is sent in), each with error="missing" or error="refused"
// where the broker can tell.
func (f *Failure) Challenges() []string {
	out := make([]string, 0, len(challenges))
	for _, c := range challenges {
		if f.accepts&c.kind == 0 {
			continue
		}
		v := c.scheme
		if s := f.state(c.kind); s != untold {
			sep := ", "
			if !strings.Contains(v, " ") {
				sep = " " // the scheme's first parameter
			}
			v += sep + `error="` + s.String() + `"`
		}
		out = append(out, v)
	}
	return out
}

func (s state) String() string {
	switch s {
	case missing:
		return "missing"
	case refused:
		return "refused"
	}
	return ""
}

// Message is the refusal for the client: the kinds of credential the
// broker takes and what was wrong with what the request presented, such as
// "The request is not authorized: this broker takes client certificates
// only, and no client certificate was presented."
func (f *Failure) Message() string {
	var b strings.Builder
	b.WriteString("The request is not authorized: this broker takes ")
	b.WriteString(accepted(f.accepts))
	if len(f.findings) > 0 {
		b.WriteString(", and ")
		b.WriteString(strings.Join(f.findings, "; "))
	}
	b.WriteByte('.')
	return b.String()
}

// accepted names the kinds of credential in k.
func accepted(k kinds) string {
	const key = "an aeg-sas-key (or Authorization: SharedAccessKey)"
	const token = "a SAS token (aeg-sas-token, or Authorization: SharedAccessSignature)"
	switch {
	case k&certKind != 0 && k&keyKind != 0:
		return "a client certificate, " + key + " or " + token
	case k&certKind != 0:
		return "client certificates only"
	case k&keyKind != 0:
		return "SAS keys only: " + key + " or " + token
	}
	return "no credential"
}

// What a refusal tells the client of a credential refused, by the reason
// logged for it.
var refusalFindings = map[string]string{
	"client certificate not yet valid":                 "the client certificate presented is not valid yet",
	"client certificate expired":                       "the client certificate presented has expired",
	"client certificate not for client authentication": "the client certificate presented is not for client authentication",
	"client certificate chain invalid":                 "the client certificate presented does not verify against its chain",
	"client certificate not trusted":                   "the client certificate presented was not issued by a CA this broker trusts",
	"sas key mismatch":                                 "the aeg-sas-key presented is not one of this broker's keys",
	"sas token malformed":                              "the SAS token presented is malformed",
	"sas token signature mismatch":                     "the SAS token presented is not signed with one of this broker's keys",
	"sas token expiry unreadable":                      "the SAS token presented has an expiry that cannot be read",
	"sas token expired":                                "the SAS token presented has expired",
	"sas token resource mismatch":                      "the SAS token presented was signed for another address (scheme, host or port) than this broker's",
	"no client certificate":                            "no client certificate was presented",
	"no client certificate over plain http":            "no client certificate can be presented over plain HTTP",
	"no sas key or token":                              "no aeg-sas-key or SAS token was presented",
	"sas credentials presented, but sas keys are off":  "the SAS key or token presented was not considered: SAS keys are off on this broker",
}
