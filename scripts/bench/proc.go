package main

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"strconv"
)

// clockTicks is sysconf(_SC_CLK_TCK), which is 100 on every Linux
// architecture Go supports; /proc/<pid>/stat counts CPU time in these ticks.
const clockTicks = 100

// procCPU returns the user and system CPU time of process pid, in clock
// ticks, read from /proc/<pid>/stat.
func procCPU(pid int) (ticks int64, err error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	return parseStatCPU(b)
}

// parseStatCPU returns utime+stime from the text of /proc/<pid>/stat. The
// command name (field 2) is in parentheses and may hold spaces and
// parentheses itself, so the fields are counted from the last ')': utime and
// stime are fields 14 and 15 of the line, the 12th and 13th after it.
func parseStatCPU(b []byte) (int64, error) {
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0, errors.New("proc stat: no command name")
	}
	f := bytes.Fields(b[i+1:])
	if len(f) < 13 {
		return 0, fmt.Errorf("proc stat: %d fields after the command name, want at least 13", len(f))
	}
	utime, err := strconv.ParseInt(string(f[11]), 10, 64)
	if err != nil {
		return 0, fmt.Errorf("proc stat: utime: %w", err)
	}
	stime, err := strconv.ParseInt(string(f[12]), 10, 64)
	if err != nil {
		return 0, fmt.Errorf("proc stat: stime: %w", err)
	}
	return utime + stime, nil
}

// memInfo is a process's resident memory, in bytes.
type memInfo struct {
	RSS  int64 // VmRSS: resident now
	Peak int64 // VmHWM: the most resident since the process started
}

// procMem returns the resident memory of process pid, read from
// /proc/<pid>/status.
func procMem(pid int) (memInfo, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return memInfo{}, err
	}
	return parseStatusMem(b)
}

// parseStatusMem reads VmRSS and VmHWM (in kB) from the text of
// /proc/<pid>/status and returns them in bytes. It returns an error if
// VmRSS is missing, as it is for a zombie.
func parseStatusMem(b []byte) (memInfo, error) {
	var m memInfo
	var haveRSS bool
	for len(b) > 0 {
		line := b
		if i := bytes.IndexByte(b, '\n'); i >= 0 {
			line, b = b[:i], b[i+1:]
		} else {
			b = nil
		}
		key, val, ok := bytes.Cut(line, []byte{':'})
		if !ok {
			continue
		}
		var dst *int64
		switch string(key) {
		case "VmRSS":
			dst, haveRSS = &m.RSS, true
		case "VmHWM":
			dst = &m.Peak
		default:
			continue
		}
		f := bytes.Fields(val)
		if len(f) != 2 || string(f[1]) != "kB" {
			return memInfo{}, fmt.Errorf("proc status: %s: unexpected value %q", key, bytes.TrimSpace(val))
		}
		kb, err := strconv.ParseInt(string(f[0]), 10, 64)
		if err != nil {
			return memInfo{}, fmt.Errorf("proc status: %s: %w", key, err)
		}
		*dst = kb * 1024
	}
	if !haveRSS {
		return memInfo{}, errors.New("proc status: no VmRSS line (has the process exited?)")
	}
	return m, nil
}

// parseGCTrace reads a GODEBUG=gctrace=1 line of the Go runtime,
//
//	gc 7 @0.512s 1%: 0.01+1.2+0.02 ms clock, …, 4->5->2 MB, 8 MB goal, …
//
// and returns the heap live after that collection (the third figure of
// "4->5->2 MB"), in bytes. ok is false for any other line.
func parseGCTrace(line []byte) (live int64, ok bool) {
	if !bytes.HasPrefix(line, []byte("gc ")) {
		return 0, false
	}
	for _, f := range bytes.Split(line, []byte(", ")) {
		heap, unit, found := bytes.Cut(f, []byte(" "))
		if !found || string(unit) != "MB" || bytes.Count(heap, []byte("->")) != 2 {
			continue
		}
		parts := bytes.Split(heap, []byte("->"))
		mbs, err := strconv.ParseInt(string(parts[2]), 10, 64)
		if err != nil {
			return 0, false
		}
		return mbs << 20, true
	}
	return 0, false
}

// cpuTimes is the machine's CPU time from the first line of /proc/stat, in
// clock ticks summed over all cores.
type cpuTimes struct {
	Busy  int64 // user, nice, system, irq and softirq
	Idle  int64 // idle and iowait
	Steal int64 // taken by the hypervisor for other guests
}

// systemCPU reads the machine's CPU times.
func systemCPU() (cpuTimes, error) {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return cpuTimes{}, err
	}
	return parseProcStat(b)
}

// parseProcStat reads the aggregate "cpu" line of /proc/stat: user nice
// system idle iowait irq softirq steal (guest time is already in user).
func parseProcStat(b []byte) (cpuTimes, error) {
	line, _, _ := bytes.Cut(b, []byte{'\n'})
	f := bytes.Fields(line)
	if len(f) < 9 || string(f[0]) != "cpu" {
		return cpuTimes{}, errors.New("proc stat: no aggregate cpu line with 8 figures")
	}
	var v [8]int64
	for i := range v {
		n, err := strconv.ParseInt(string(f[i+1]), 10, 64)
		if err != nil {
			return cpuTimes{}, fmt.Errorf("proc stat: cpu field %d: %w", i+1, err)
		}
		v[i] = n
	}
	return cpuTimes{Busy: v[0] + v[1] + v[2] + v[5] + v[6], Idle: v[3] + v[4], Steal: v[7]}, nil
}
