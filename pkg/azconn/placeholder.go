package azconn

import "strings"

// Placeholder returns the first placeholder s still holds, and whether it
// holds one: a name in angle brackets, as documentation writes the parts
// to fill in ("<key>", "<your-storage-account-connection-string>"), or an
// ellipsis standing for the whole value. No connection string, key, URL
// or queue name can hold one, and it is no secret, so an error may quote
// it: every destination says "placeholder" of a value pasted from an
// example, whatever else is wrong with it.
func Placeholder(s string) (string, bool) {
	switch t := strings.TrimSpace(s); t {
	case "…", "...":
		return t, true
	}
	for i := strings.IndexByte(s, '<'); i >= 0; {
		end := strings.IndexByte(s[i+1:], '>')
		if end < 0 {
			return "", false
		}
		if name := s[i+1 : i+1+end]; placeholderName(name) {
			return s[i : i+2+end], true
		}
		next := strings.IndexByte(s[i+1:], '<')
		if next < 0 {
			return "", false
		}
		i += 1 + next
	}
	return "", false
}

// placeholderName reports whether name, between angle brackets, names a
// part to fill in: 1 to 64 letters, digits, spaces and '-', '_', '.', '/'.
func placeholderName(name string) bool {
	if name == "" || len(name) > 64 {
		return false
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == ' ' || c == '-' || c == '_' || c == '.' || c == '/') {
			return false
		}
	}
	return true
}
