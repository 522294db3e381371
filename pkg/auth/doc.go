// Package auth authenticates inbound API calls (docs/design.md#authentication,
// docs/design.md#sas-tokens): a SAS key
// in the aeg-sas-key header, a SAS token in the aeg-sas-token header (the
// format the Azure Event Grid SDKs produce), or the TLS client certificate.
//
// Authenticate returns only a *Failure (ErrUnauthorized under errors.Is,
// with the kind of failure for metrics) to callers plus a short reason for
// logs. Reasons are fixed phrases: they never contain a key, a token or a
// certificate.
package auth
