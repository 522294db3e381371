// Package auth authenticates inbound API calls and says what their
// credentials hold (docs/design.md#authentication, docs/design.md#sas-tokens,
// docs/security.md#who-may-do-what): a SAS key in the aeg-sas-key header, a
// SAS token in the aeg-sas-token header (the format the Azure Event Grid
// SDKs produce), or the TLS client certificate.
//
// Check returns a Grant: a key or a trusted certificate holds every
// Permission; a token holds Publish and Receive (as in Azure Event Grid)
// and Scrape on what lies below the resource it was signed for, and
// Grant.Permit answers for one route. A refusal is a *Failure (401: its Message and
// Challenges name the kinds of credential the broker takes and what was
// missing or refused) or a *Denied (403: a token on a route that reads or
// manages). Each comes with a short reason for the log. Messages and
// reasons are fixed phrases: they never contain a key, a token or a
// certificate.
package auth
