package azconn

// StorageNameProblem checks a blob container or queue name against Azure
// Storage's naming rules, which are the same for both: 3 to 63 characters,
// lower-case letters, digits and single hyphens, starting and ending with a
// letter or digit. It returns what is wrong, as the end of a sentence
// ("is required", "must be …"), or "" for a valid name.
func StorageNameProblem(n string) string {
	if n == "" {
		return "is required"
	}
	if len(n) < 3 || len(n) > 63 {
		return "must be 3 to 63 characters long"
	}
	for i := 0; i < len(n); i++ {
		c := n[i]
		switch {
		case c >= 'a' && c <= 'z', c >= '0' && c <= '9':
		case c == '-' && i > 0 && i < len(n)-1 && n[i-1] != '-':
		default:
			return "may hold only lower-case letters, digits and single hyphens, and must start and end with a letter or digit"
		}
	}
	return ""
}
