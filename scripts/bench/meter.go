package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"time"
)

// meter measures the broker (and this process) over one scenario's window.
type meter struct {
	b    *broker
	u0   usage
	gc0  int64
	sys0 cpuTimes
	t0   time.Time
	self time.Duration
	perf *exec.Cmd
	file string // perf data file
}

// selfCPU returns the CPU time this process (load generator and sink) has
// used.
func selfCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// startMeter takes the starting snapshot. With perfDir set it also starts
// `perf record` on the broker, writing perfDir/<name>.perf.data.
func startMeter(b *broker, name, perfDir string) (*meter, error) {
	m := &meter{b: b}
	if perfDir != "" {
		m.file = filepath.Join(perfDir, name+".perf.data")
		m.perf = exec.Command("perf", "record", "-F", "499", "-g", "-p", fmt.Sprint(b.pid), "-o", m.file)
		m.perf.Stdout, m.perf.Stderr = nil, nil
		if err := m.perf.Start(); err != nil {
			return nil, fmt.Errorf("perf record: %w", err)
		}
		time.Sleep(300 * time.Millisecond) // let it attach
	}
	u, err := b.usage()
	if err != nil {
		return nil, err
	}
	m.u0, m.self, m.gc0, m.t0 = u, selfCPU(), b.gcCycles.Load(), time.Now()
	m.sys0, _ = systemCPU()
	return m, nil
}

// finish takes the closing snapshot and fills r's CPU and memory figures;
// events is the count the CPU time is shared over.
func (m *meter) finish(r *result, events int64) error {
	u, err := m.b.usage()
	if err != nil {
		return err
	}
	self := selfCPU()
	sys, _ := systemCPU()
	wall := time.Since(m.t0).Seconds()
	m.stopPerf(r)
	r.BrokerCPU = float64(u.ticks-m.u0.ticks) / clockTicks
	if events > 0 {
		r.CPUPer1000 = r.BrokerCPU / (float64(events) / 1000)
	}
	r.BenchCPU = (self - m.self).Seconds()
	// Whatever else ran on the machine meanwhile competed for the same
	// cores; the figures are only comparable when this is near zero.
	other := float64(sys.Busy-m.sys0.Busy)/clockTicks - r.BrokerCPU - r.BenchCPU
	r.OtherCores = max(other, 0) / wall
	r.StealCores = float64(sys.Steal-m.sys0.Steal) / clockTicks / wall
	if r.OtherCores > 0.1 || r.StealCores > 0.1 {
		r.note("other load on the machine during the run: %.2f cores busy elsewhere, %.2f stolen by the hypervisor",
			r.OtherCores, r.StealCores)
	}
	r.RSS, r.PeakRSS = u.mem.RSS, u.mem.Peak
	r.detail("broker_gc_cycles", m.b.gcCycles.Load()-m.gc0)
	r.detail("broker_live_heap_after_last_gc_bytes", m.b.liveHeap.Load())
	return nil
}

// stopPerf stops perf record (SIGINT to its PID, which makes it write its
// file) and saves a flat report next to the data.
func (m *meter) stopPerf(r *result) {
	if m.perf == nil {
		return
	}
	_ = m.perf.Process.Signal(os.Interrupt)
	_ = m.perf.Wait()
	m.perf = nil
	txt := m.file[:len(m.file)-len(".data")] + ".txt"
	out, err := exec.Command("perf", "report", "-i", m.file, "--stdio", "--no-children",
		"--sort", "symbol", "--percent-limit", "0.5", "-g", "none").Output()
	if err != nil {
		r.Notes = append(r.Notes, "perf report failed: "+err.Error())
		return
	}
	if err := os.WriteFile(txt, out, 0o644); err != nil {
		r.Notes = append(r.Notes, err.Error())
		return
	}
	r.Notes = append(r.Notes, "broker CPU profile: "+txt)
}

// waitIdle waits until the machine is idle (under 0.1 cores busy over a
// second) or up to limit, and returns how long it waited and whether the
// machine became idle.
func waitIdle(limit time.Duration) (time.Duration, bool) {
	start := time.Now()
	for {
		a, err := systemCPU()
		if err != nil {
			return 0, false
		}
		time.Sleep(time.Second)
		b, err := systemCPU()
		if err != nil {
			return 0, false
		}
		busy := float64(b.Busy-a.Busy) / clockTicks
		if busy < 0.1 {
			return time.Since(start), true
		}
		if time.Since(start) > limit {
			return time.Since(start), false
		}
	}
}
