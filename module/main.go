// Command edgegrid is the broker's container entry point: it reads its
// configuration from the environment, serves the Event Grid on IoT Edge API
// and delivers events until it receives SIGTERM or SIGINT.
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime"
	"syscall"
	"time"

	"github.com/mattn/go-isatty"
	"github.com/rs/zerolog"

	"github.com/edgegrid/edgegrid/pkg/config"
)

func main() {
	if len(os.Args) > 1 && os.Args[1] == "healthcheck" {
		os.Exit(healthcheck(os.Args[2:]))
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	cfg, err := config.Load()
	if err != nil {
		fmt.Fprintln(os.Stderr, "edgegrid: configuration error:", err)
		os.Exit(2)
	}
	if cfg.PprofAddress == "" {
		// Without the profiling endpoints nobody can read a heap profile,
		// and sampling allocations for one costs every large allocation a
		// chance of a stack walk: a receive of 100 events allocates a few
		// hundred kilobytes, and pull delivery spent 1.5 % of its CPU on
		// samples nobody reads.
		runtime.MemProfileRate = 0
	}
	logger := newLogger(os.Stdout, cfg)
	warnUnknownKeys(logger, os.Environ())
	if err := run(ctx, cfg, logger, nil); err != nil {
		logger.Error().Err(err).Msg("edgegrid stopped with an error")
		os.Exit(1)
	}
}

// warnUnknownKeys logs one warning for each variable of environ under the
// broker's prefixes that is no key it reads: most likely a misspelt key,
// which would otherwise be without effect and without a word. The broker
// still starts, so that a manifest written for a newer version does not stop
// an older one.
func warnUnknownKeys(log zerolog.Logger, environ []string) {
	for _, u := range config.UnknownKeys(environ) {
		ev := log.Warn().Str("key", u.Name)
		if u.Nearest != "" {
			ev = ev.Str("nearestKey", u.Nearest)
		}
		ev.Msg("environment variable ignored: it is not a configuration key of this version (docs/configuration.md)")
	}
}

// newLogger builds the root logger: JSON lines, or readable console lines
// (see consoleLogs).
func newLogger(w io.Writer, cfg config.Config) zerolog.Logger {
	if consoleLogs(cfg, isTerminal(w)) {
		w = zerolog.ConsoleWriter{Out: w, TimeFormat: time.RFC3339}
	}
	level, err := zerolog.ParseLevel(cfg.LogLevel)
	if err != nil || level == zerolog.NoLevel {
		level = zerolog.InfoLevel
	}
	zerolog.TimeFieldFormat = time.RFC3339Nano
	return zerolog.New(w).Level(level).With().Timestamp().Str("service", "edgegrid").Logger()
}

// consoleLogs decides the log format. log__format=json or console forces
// it; auto, the default, writes console lines for a person at a terminal
// and JSON for machines: always under IoT Edge, whose runtime collects
// module logs, and whenever the log is not a terminal.
func consoleLogs(cfg config.Config, terminal bool) bool {
	switch cfg.LogFormat {
	case "console":
		return true
	case "json":
		return false
	}
	return terminal && cfg.IoTEdgeModuleID == ""
}

// isTerminal reports whether w is a terminal.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && (isatty.IsTerminal(f.Fd()) || isatty.IsCygwinTerminal(f.Fd()))
}
