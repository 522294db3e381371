package tests_test

import (
	"errors"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/edgegrid/edgegrid/pkg/api"
	"github.com/edgegrid/edgegrid/pkg/auth"
)

// docs/security.md's table of who may do what is the code's route table,
// row for row (the 405 answers of a subscription's views aside, which the
// page names in a sentence), and its example refusals are the broker's.
func TestDocs_PermissionTable(t *testing.T) {
	t.Parallel()
	b, err := os.ReadFile(filepath.Join(repoRoot(t), "docs", "security.md"))
	if err != nil {
		t.Fatal(err)
	}
	page := string(b)
	row := regexp.MustCompile("(?m)^\\| (GET|HEAD|PUT|POST|DELETE|PATCH) \\| `([^`]+)` \\| (\\w+) \\|$")
	var documented []string
	for _, m := range row.FindAllStringSubmatch(page, -1) {
		documented = append(documented, m[1]+" "+m[2]+" "+m[3])
	}
	var code []string
	for _, r := range api.RouteTable() {
		if r.Permission == api.Public && r.Method != "GET" && r.Method != "HEAD" || r.Permission == api.Public && strings.HasSuffix(r.Path, "/getFullUrl") {
			continue // a view's 405
		}
		code = append(code, r.Method+" "+r.Path+" "+string(r.Permission))
	}
	if !slices.Equal(documented, code) {
		t.Errorf("docs/security.md's table of who may do what differs from api.RouteTable:\n  page: %q\n  code: %q", documented, code)
	}

	r := httptest.NewRequest("GET", "https://eventgridmodule:4438/topics", nil)
	_, _, err = auth.New(auth.Options{ClientCertEnabled: true}).Check(r)
	var f *auth.Failure
	if !errors.As(err, &f) || !strings.Contains(page, f.Message()) || !strings.Contains(page, "Www-Authenticate: "+f.Challenges()[0]+"\n") {
		t.Errorf("docs/security.md does not show the default broker's refusal: %v", err)
	}
	key := "ZG9jcy1leGFtcGxlLWtleQ=="
	r.Header.Set(auth.HeaderSASToken, auth.GenerateSASToken("https://eventgridmodule:4438/topics/t/events", time.Now().Add(time.Hour), key))
	g, _, err := auth.New(auth.Options{ClientCertEnabled: true, SASKeysEnabled: true, Key1: key}).Check(r)
	if err != nil {
		t.Fatal(err)
	}
	_, err = g.Permit(auth.Read, "/topics/t/events")
	var d *auth.Denied
	if !errors.As(err, &d) || !strings.Contains(page, d.Message()) {
		t.Errorf("docs/security.md does not show the 403 a token gets on the live tail: %v", err)
	}
}
