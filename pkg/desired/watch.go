package desired

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"time"
)

// readFile reads the desired configuration file. It follows symbolic links
// at every read, as a mounted Kubernetes ConfigMap needs: the file there is
// a link through the directory's "..data" link, which the kubelet swaps
// atomically to a new timestamped directory when the ConfigMap changes.
func readFile(path string) ([]byte, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("reading desired_config_file: %w", err)
	}
	if len(bytes.TrimSpace(b)) == 0 {
		return nil, fmt.Errorf("desired_config_file %s is empty", path)
	}
	return b, nil
}

// WatchFile applies doc, the content of the file at path as read at start,
// as the file's declaration (owner File(path)), then follows the file:
// every interval it reads the file again and applies it when its content
// differs from the last content read, and it applies the last good content
// again when a retry is due (Retries). A file that cannot be read, is empty
// or is not a valid document is logged once and changes nothing; the last
// content applied stays in force. onApply, if not nil, is called after
// each apply. WatchFile returns when ctx is done.
//
// Polling the content, rather than watching the file system for events,
// sees every way a file can change (written in place, renamed over, or a
// directory link swapped under it, as the kubelet does) with the standard
// library alone; reading a small file every few seconds costs nothing.
func (r *Reconciler) WatchFile(ctx context.Context, path string, interval time.Duration, doc []byte, onApply func(Result, error)) {
	owner := File(path)
	log := r.logFor(owner)
	due := r.Retries(owner)
	last, good := doc, doc
	var lastErr string
	apply := func(b []byte) {
		res, err := r.Apply(ctx, owner, b)
		if ctx.Err() != nil {
			return
		}
		if err == nil {
			good = b
		}
		if onApply != nil {
			onApply(res, err)
		}
	}
	if doc != nil {
		apply(doc)
	}
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-due:
			if good != nil {
				apply(good)
			}
			continue
		case <-t.C:
		}
		b, err := readFile(path)
		if err != nil {
			if err.Error() != lastErr {
				lastErr = err.Error()
				log.Warn().Str("error", err.Error()).
					Msg("desired_config_file cannot be read; the configuration last applied stays in force")
			}
			continue
		}
		lastErr = ""
		if bytes.Equal(b, last) {
			continue
		}
		last = b
		log.Info().Msg("desired_config_file changed; applying it")
		apply(b)
	}
}
