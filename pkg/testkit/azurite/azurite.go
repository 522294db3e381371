package azurite

import (
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/container"

	"github.com/edgegrid/edgegrid/pkg/testkit/brokertest"
)

// The account every Azurite serves, from Azurite's documentation.
const (
	Account = "devstoreaccount1"
	Key     = "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw=="
)

// Install is how to get Azurite.
const Install = "bash scripts/ci-deps/azurite.sh (npm install -g azurite@3.37.0)"

// Server is a running Azurite.
type Server struct {
	tb        testing.TB
	bin       string
	blobPort  int
	queuePort int
	cmd       *exec.Cmd
	exited    chan struct{}
}

// Start runs Azurite's blob and queue services. A missing Azurite fails the
// test under CI and skips it elsewhere, saying how to install it.
func Start(tb testing.TB) *Server {
	tb.Helper()
	s := &Server{tb: tb, bin: brokertest.RequireCommand(tb, "azurite", Install),
		blobPort: brokertest.FreePort(tb), queuePort: brokertest.FreePort(tb)}
	s.start()
	tb.Cleanup(s.Stop)
	return s
}

func (s *Server) start() {
	s.tb.Helper()
	dir := s.tb.TempDir()
	// --skipApiVersionCheck: the SDK speaks a newer API version than
	// Azurite knows; --loose: ignore headers it does not support.
	s.cmd = exec.Command(s.bin, "--silent", "--inMemoryPersistence", "--skipApiVersionCheck", "--loose",
		"--blobHost", "127.0.0.1", "--blobPort", strconv.Itoa(s.blobPort),
		"--queueHost", "127.0.0.1", "--queuePort", strconv.Itoa(s.queuePort),
		"--tableHost", "127.0.0.1", "--tablePort", strconv.Itoa(brokertest.FreePort(s.tb)),
		"--debug", dir+"/debug.log")
	s.cmd.Dir = dir
	s.cmd.Stderr = os.Stderr // its start-up chatter on stdout is not wanted
	s.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := s.cmd.Start(); err != nil {
		s.tb.Fatalf("starting azurite: %v", err)
	}
	s.exited = make(chan struct{})
	go func(cmd *exec.Cmd, done chan struct{}) { _ = cmd.Wait(); close(done) }(s.cmd, s.exited)
	for _, port := range []int{s.blobPort, s.queuePort} {
		brokertest.Eventually(s.tb, 60*time.Second, func() error {
			select {
			case <-s.exited:
				s.tb.Fatal("azurite exited at start")
			default:
			}
			c, err := net.DialTimeout("tcp", "127.0.0.1:"+strconv.Itoa(port), time.Second)
			if err != nil {
				return err
			}
			return c.Close()
		})
	}
}

// Stop ends Azurite (its process group, which it started) and waits for it.
func (s *Server) Stop() {
	if s.cmd == nil || s.cmd.Process == nil {
		return
	}
	select {
	case <-s.exited:
		return
	default:
	}
	_ = syscall.Kill(-s.cmd.Process.Pid, syscall.SIGTERM)
	select {
	case <-s.exited:
	case <-time.After(3 * time.Second):
		_ = syscall.Kill(-s.cmd.Process.Pid, syscall.SIGKILL)
		<-s.exited
	}
}

// Restart stops Azurite and starts it again on the same ports, empty.
func (s *Server) Restart() {
	s.tb.Helper()
	s.Stop()
	s.start()
}

// BlobURL and QueueURL are the services' base URLs for the account.
func (s *Server) BlobURL() string { return fmt.Sprintf("http://127.0.0.1:%d/%s", s.blobPort, Account) }
func (s *Server) QueueURL() string {
	return fmt.Sprintf("http://127.0.0.1:%d/%s", s.queuePort, Account)
}

// ConnectionString is the account's connection string, with key.
func (s *Server) ConnectionString(key string) string {
	return "DefaultEndpointsProtocol=http;AccountName=" + Account + ";AccountKey=" + key +
		";BlobEndpoint=" + s.BlobURL() + ";QueueEndpoint=" + s.QueueURL() + ";"
}

// Blobs returns the content of every blob in a container by name; none when
// the container does not exist (yet).
func Blobs(tb testing.TB, connStr, containerName string) map[string][]byte {
	tb.Helper()
	c, err := container.NewClientFromConnectionString(connStr, containerName, nil)
	if err != nil {
		tb.Fatal(err)
	}
	out := map[string][]byte{}
	pager := c.NewListBlobsFlatPager(nil)
	for pager.More() {
		page, err := pager.NextPage(context.Background())
		if err != nil {
			return out
		}
		for _, b := range page.Segment.BlobItems {
			resp, err := c.NewBlobClient(*b.Name).DownloadStream(context.Background(), nil)
			if err != nil {
				tb.Fatal(err)
			}
			raw, err := io.ReadAll(resp.Body)
			resp.Body.Close()
			if err != nil {
				tb.Fatal(err)
			}
			out[*b.Name] = raw
		}
	}
	return out
}
