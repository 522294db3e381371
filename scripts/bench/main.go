package main

import (
	"bufio"
	"debug/buildinfo"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"time"
)

// envFlag collects repeated -env KEY=VALUE flags.
type envFlag map[string]string

func (e envFlag) String() string { return fmt.Sprint(map[string]string(e)) }

func (e envFlag) Set(v string) error {
	k, val, ok := strings.Cut(v, "=")
	if !ok || k == "" {
		return fmt.Errorf("want KEY=VALUE, got %q", v)
	}
	e[k] = val
	return nil
}

// machine describes where the benchmark ran.
type machine struct {
	Cores         int    `json:"cores"`
	CPU           string `json:"cpu"`
	OS            string `json:"os"`
	BenchGo       string `json:"bench_go_version"`
	BrokerGo      string `json:"broker_go_version"`
	BrokerBinary  string `json:"broker_binary"`
	SinkInProcess bool   `json:"sink_in_bench_process"`
}

// report is the JSON file's content.
type report struct {
	Started  time.Time `json:"started"`
	Command  string    `json:"command"`
	Machine  machine   `json:"machine"`
	Settings struct {
		EventSize    int     `json:"event_size_bytes"`
		Publishers   int     `json:"publishers"`
		Duration     string  `json:"duration"`
		Events       int64   `json:"events"`
		FanoutEvents int64   `json:"fanout_events"`
		Rate         float64 `json:"rate"`
		RateWorkers  int     `json:"rate_workers"`
		Backlog      int     `json:"backlog"`
		Overflow     int     `json:"overflow_requests"`
		HangTimeout  int     `json:"hang_timeout_seconds"`
	} `json:"settings"`
	Results []result `json:"results"`
	// Ratios are the comparisons between scenarios, per round and their
	// median (compare.go).
	Ratios []ratioSummary `json:"ratios,omitempty"`
}

func main() {
	if os.Getenv(relayEnv) != "" {
		if err := runRelay(); err != nil {
			fmt.Fprintln(os.Stderr, "relay:", err)
			os.Exit(1)
		}
		return
	}
	var (
		s         settings
		scenarios string
		out       string
		rounds    int
		env       = envFlag{}
	)
	flag.StringVar(&s.bin, "broker", "", "broker binary to run (default: build ./module into a temporary directory)")
	flag.StringVar(&scenarios, "scenarios", "a,ar,b,br,c,d,e,f", "scenarios to run, comma-separated (also bc, g, h, i, j, k, l and m)")
	flag.IntVar(&s.size, "size", 1024, "bytes per event, as published")
	flag.IntVar(&s.publishers, "publishers", 6, "concurrent publishers (closed loop) in a-e")
	flag.DurationVar(&s.duration, "duration", 10*time.Second, "publishing time of a, b and f")
	flag.Int64Var(&s.events, "events", 0, "events to publish in a and b instead of publishing for -duration, and in g (default 400,000)")
	flag.Int64Var(&s.fanoutEvents, "fanout-events", 100000, "events to publish in c and d (each delivered to 10 subscriptions); both run with broker__maxQueuedEvents of this plus 100,000")
	flag.Float64Var(&s.rate, "rate", 2000, "events per second in f")
	flag.IntVar(&s.rateWorkers, "rate-workers", 32, "most publish requests in flight in f")
	flag.IntVar(&s.backlog, "backlog", 100000, "events queued for the dead subscriber in e (also its broker__maxQueuedEvents)")
	flag.IntVar(&s.overflow, "overflow", 3000, "publish requests of 100 events sent past the limit in e")
	flag.IntVar(&s.hangTimeout, "hang-timeout", 5, "broker__deliverTimeoutInSeconds in d")
	flag.DurationVar(&s.drain, "drain", 30*time.Second, "give up waiting for deliveries when none has arrived for this long")
	flag.StringVar(&out, "out", filepath.Join(os.TempDir(), "edgegrid-bench.json"), "JSON report file")
	flag.StringVar(&s.perfDir, "perf", "", "directory for perf record profiles of the broker, one per scenario (needs perf; adds overhead)")
	flag.DurationVar(&s.waitIdle, "wait-idle", 0, "before each scenario, wait up to this long for the machine to be idle (other processes under 0.1 cores)")
	flag.IntVar(&s.retryBusy, "retry-busy", 0, "run a scenario again, up to this many times, when other processes took more than 0.15 cores during it; the quietest run is kept")
	flag.Var(&s.chaos.specs, "chaos", "a faulty run of h, RATE:KINDS:TIMEOUT[:TARGET] (repeatable): the fraction of delivery requests that fail, the fault kinds (500, 408, drop, late, 503, 429; neutral = 500,408,drop,late; all), broker__deliverTimeoutInSeconds, and the most times slower than fault-free it may be (default "+strings.Join(defaultChaos, " ")+")")
	flag.Int64Var(&s.chaos.events, "chaos-events", 20000, "events to publish in each run of h")
	flag.IntVar(&s.chaos.subs, "chaos-subs", 8, "subscriptions of h's topic; every other one is batched")
	flag.IntVar(&s.chaos.batch, "chaos-batch", 10, "maxEventsPerBatch of h's batched subscriptions")
	flag.Uint64Var(&s.chaos.seed, "seed", 1, "seed of h's fault draws")
	flag.DurationVar(&s.crowdWait, "crowd-wait", 3*time.Minute, "in l, give up waiting for deliveries when none has arrived for this long (a sender that waits out its delivery timeout stays silent for a minute)")
	flag.Int64Var(&s.redriveEvents, "redrive-events", 100000, "events given up on, then redriven, then published afresh in m")
	flag.IntVar(&s.consoleRounds, "console-rounds", 2, "how many times i runs b's flow without, then with, the console open")
	flag.IntVar(&rounds, "rounds", 1, "run the scenarios this many times over, in turn; the ratios between them (a/ar, b/br, g/b) are reported for each round and as their median")
	flag.Var(env, "env", "extra broker environment KEY=VALUE for every scenario (repeatable), e.g. -env GOGC=200")
	flag.Parse()
	s.env = env
	if err := run(&s, scenarios, out, rounds); err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
}

func run(s *settings, scenarios, out string, rounds int) error {
	switch {
	case s.publishers < 1, s.rateWorkers < 1:
		return fmt.Errorf("-publishers and -rate-workers must be at least 1")
	case s.rate <= 0, s.size < 1, s.backlog < 1, s.hangTimeout < 1:
		return fmt.Errorf("-rate, -size, -backlog and -hang-timeout must be positive")
	case s.duration <= 0:
		return fmt.Errorf("-duration must be positive")
	case s.chaos.events < 1, s.chaos.subs < 1, s.chaos.batch < 1:
		return fmt.Errorf("-chaos-events, -chaos-subs and -chaos-batch must be positive")
	case s.redriveEvents < 1:
		return fmt.Errorf("-redrive-events must be positive")
	case s.consoleRounds < 1, rounds < 1:
		return fmt.Errorf("-console-rounds and -rounds must be at least 1")
	}
	if runtime.GOOS != "linux" {
		return fmt.Errorf("the broker's CPU and memory are read from /proc: Linux only")
	}
	if s.bin == "" {
		dir, err := os.MkdirTemp("", "edgegrid-bench-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(dir)
		fmt.Fprintln(os.Stderr, "building the broker (go build ./module)…")
		if s.bin, err = buildBroker(dir); err != nil {
			return err
		}
	}
	if s.perfDir != "" {
		if err := os.MkdirAll(s.perfDir, 0o755); err != nil {
			return err
		}
	}
	rep := report{Started: time.Now().UTC(), Command: strings.Join(append([]string{"go run ./scripts/bench"}, os.Args[1:]...), " "), Machine: describe(s.bin)}
	rep.Settings.EventSize, rep.Settings.Publishers, rep.Settings.Duration = s.size, s.publishers, s.duration.String()
	rep.Settings.Events, rep.Settings.FanoutEvents = s.events, s.fanoutEvents
	rep.Settings.Rate, rep.Settings.RateWorkers = s.rate, s.rateWorkers
	rep.Settings.Backlog, rep.Settings.Overflow, rep.Settings.HangTimeout = s.backlog, s.overflow, s.hangTimeout
	m := rep.Machine
	fmt.Printf("machine: %d cores (%s), %s; bench %s, broker %s; sink in the bench process\n",
		m.Cores, m.CPU, m.OS, m.BenchGo, m.BrokerGo)
	fmt.Printf("events of %d B, %d publishers\n\n", s.size, s.publishers)

	var names []string
	for _, name := range strings.Split(scenarios, ",") {
		switch name = strings.TrimSpace(name); name {
		case "":
		case "a", "ar", "b", "br", "bc", "c", "d", "e", "f", "g", "h", "i", "j", "k", "l", "m":
			names = append(names, name)
		default:
			return fmt.Errorf("unknown scenario %q (want a-m, ar, br or bc)", name)
		}
	}
	var ratios []map[string]float64
	for round := 1; round <= rounds; round++ {
		var results []result
		var c9 float64 // subscriptions 1-9 in c, for d
		for _, name := range names {
			if rounds > 1 {
				fmt.Fprintf(os.Stderr, "round %d of %d: ", round, rounds)
			}
			switch name {
			case "h":
				results = append(results, s.scenarioH()...)
			case "i":
				results = append(results, s.scenarioI()...)
			case "m":
				results = append(results, s.scenarioM()...)
			default:
				r := s.scenario(name, c9)
				if name == "c" {
					c9, _ = r.Details["subscriptions_1_to_9_events_per_second"].(float64)
				}
				results = append(results, r)
			}
		}
		ratios = append(ratios, compare(results))
		if rounds > 1 {
			for i := range results {
				results[i].detail("round", round)
			}
		}
		rep.Results = append(rep.Results, results...)
	}
	rep.Ratios = summarizeRatios(ratios)
	printTable(os.Stdout, rep.Results)
	if len(rep.Ratios) > 0 {
		fmt.Println()
		printRatios(os.Stdout, rep.Ratios)
	}
	b, err := json.MarshalIndent(rep, "", "  ")
	if err != nil {
		return err
	}
	if err := os.WriteFile(out, append(b, '\n'), 0o644); err != nil {
		return err
	}
	fmt.Printf("\nJSON report: %s\n", out)
	return nil
}

// describe reports the machine and the Go versions.
func describe(bin string) machine {
	m := machine{Cores: runtime.NumCPU(), OS: runtime.GOOS + "/" + runtime.GOARCH, BenchGo: runtime.Version(),
		BrokerBinary: bin, SinkInProcess: true, CPU: cpuModel()}
	if bi, err := buildinfo.ReadFile(bin); err == nil {
		m.BrokerGo = bi.GoVersion
	}
	return m
}

// cpuModel returns the first "model name" of /proc/cpuinfo.
func cpuModel() string {
	f, err := os.Open("/proc/cpuinfo")
	if err != nil {
		return "unknown"
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if k, v, ok := strings.Cut(sc.Text(), ":"); ok && strings.TrimSpace(k) == "model name" {
			return strings.TrimSpace(v)
		}
	}
	return "unknown"
}

// scenario runs one scenario, waiting first for the machine to be idle when
// -wait-idle is set, and running it again (up to -retry-busy times) when
// other processes took more than 0.15 cores meanwhile; it keeps the run
// with the least other load.
func (s *settings) scenario(name string, c9 float64) result {
	var best result
	for attempt := 0; attempt <= s.retryBusy; attempt++ {
		var waited time.Duration
		idle := true
		if s.waitIdle > 0 {
			waited, idle = waitIdle(s.waitIdle)
		}
		fmt.Fprintf(os.Stderr, "scenario %s…\n", name)
		var (
			r   result
			err error
		)
		switch name {
		case "a":
			r, err = s.scenarioA()
		case "ar":
			r, err = s.scenarioAR()
		case "b":
			r, err = s.scenarioB()
		case "br":
			r, err = s.scenarioBR()
		case "bc":
			r, err = s.scenarioBC()
		case "c":
			r, err = s.scenarioC()
		case "d":
			r, err = s.scenarioD(c9)
		case "e":
			r, err = s.scenarioE()
		case "f":
			r, err = s.scenarioF()
		case "g":
			r, err = s.scenarioG()
		case "j":
			r, err = s.scenarioJ()
		case "k":
			r, err = s.scenarioK()
		case "l":
			r, err = s.scenarioL()
		}
		if s.waitIdle > 0 {
			r.detail("waited_for_idle_seconds", waited.Seconds())
			if !idle {
				r.note("the machine was still busy after waiting %v for it to be idle", s.waitIdle)
			}
		}
		r.detail("attempt", attempt+1)
		if err != nil {
			r.Error = err.Error()
			r.Met = nil
			fmt.Fprintf(os.Stderr, "scenario %s: %v\n", name, err)
			return r
		}
		if attempt == 0 || r.OtherCores < best.OtherCores {
			best = r
		}
		if r.OtherCores <= 0.15 {
			break
		}
		fmt.Fprintf(os.Stderr, "scenario %s: other processes took %.2f cores during the run\n", name, r.OtherCores)
	}
	return best
}
