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
	"syscall"
	"time"

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
	logger := newLogger(os.Stdout, cfg)
	if err := run(ctx, cfg, logger, nil); err != nil {
		logger.Error().Err(err).Msg("edgegrid stopped with an error")
		os.Exit(1)
	}
}

// newLogger builds the root logger: JSON lines by default, readable console
// output when log__format is console.
func newLogger(w io.Writer, cfg config.Config) zerolog.Logger {
	if cfg.LogFormat == "console" {
		w = zerolog.ConsoleWriter{Out: w, TimeFormat: time.RFC3339}
	}
	level, err := zerolog.ParseLevel(cfg.LogLevel)
	if err != nil || level == zerolog.NoLevel {
		level = zerolog.InfoLevel
	}
	zerolog.TimeFieldFormat = time.RFC3339Nano
	return zerolog.New(w).Level(level).With().Timestamp().Str("service", "edgegrid").Logger()
}
