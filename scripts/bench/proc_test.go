package main

import "testing"

func TestParseStatCPU(t *testing.T) {
	tests := []struct {
		name    string
		stat    string
		want    int64
		wantErr bool
	}{
		{"Plain", "1234 (edgegrid) S 1 1234 1234 0 -1 4194560 1500 0 0 0 250 75 0 0 20 0 6 0 100 1000 2000\n", 325, false},
		{"NameWithSpacesAndParens", "42 (a b) c)) R 1 42 42 0 -1 0 0 0 0 0 7 3 0 0 20 0 1 0 5 6 7\n", 10, false},
		{"Truncated", "42 (x) R 1 2 3", 0, true},
		{"NoName", "42 x R", 0, true},
		{"NotANumber", "1 (x) S 1 1 1 0 -1 0 0 0 0 0 u 1 0 0\n", 0, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := parseStatCPU([]byte(tt.stat))
			if (err != nil) != tt.wantErr {
				t.Fatalf("parseStatCPU() error = %v, want error %v", err, tt.wantErr)
			}
			if got != tt.want {
				t.Fatalf("parseStatCPU() = %d, want %d", got, tt.want)
			}
		})
	}
}

func TestParseStatusMem(t *testing.T) {
	const status = "Name:\tedgegrid\nState:\tS (sleeping)\nVmPeak:\t 1300000 kB\nVmHWM:\t   20480 kB\nVmRSS:\t   10240 kB\nThreads:\t6\n"
	tests := []struct {
		name    string
		status  string
		want    memInfo
		wantErr bool
	}{
		{"Running", status, memInfo{RSS: 10240 * 1024, Peak: 20480 * 1024}, false},
		{"NoTrailingNewline", "VmRSS:\t 8 kB", memInfo{RSS: 8192}, false},
		{"Zombie", "Name:\tedgegrid\nState:\tZ (zombie)\n", memInfo{}, true},
		{"OtherUnit", "VmRSS:\t 8 MB\n", memInfo{}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := parseStatusMem([]byte(tt.status))
			if (err != nil) != tt.wantErr {
				t.Fatalf("parseStatusMem() error = %v, want error %v", err, tt.wantErr)
			}
			if got != tt.want {
				t.Fatalf("parseStatusMem() = %+v, want %+v", got, tt.want)
			}
		})
	}
}

func TestParseGCTrace(t *testing.T) {
	tests := []struct {
		name   string
		line   string
		want   int64
		wantOK bool
	}{
		{"Go126", "gc 7 @0.512s 1%: 0.010+1.2+0.020 ms clock, 0.020+0.5/1.0/0+0.040 ms cpu, 4->5->2 MB, 8 MB goal, 0 MB stacks, 0 MB globals, 2 P", 2 << 20, true},
		{"Forced", "gc 9 @120.0s 0%: 0.01+1+0.01 ms clock, 0.02+0/1/0+0.02 ms cpu, 140->140->139 MB, 280 MB goal, 0 MB stacks, 0 MB globals, 2 P (forced)", 139 << 20, true},
		{"LogLine", `{"level":"info","message":"listening"}`, 0, false},
		{"NoHeap", "gc 1 @0.1s 0%: nothing here", 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := parseGCTrace([]byte(tt.line))
			if got != tt.want || ok != tt.wantOK {
				t.Fatalf("parseGCTrace() = %d, %v, want %d, %v", got, ok, tt.want, tt.wantOK)
			}
		})
	}
}

func TestParseProcStat(t *testing.T) {
	tests := []struct {
		name    string
		stat    string
		want    cpuTimes
		wantErr bool
	}{
		{"Linux", "cpu  100 5 20 1000 7 1 2 3 0 0\ncpu0 50 2 10 500 3 0 1 1 0 0\n", cpuTimes{Busy: 128, Idle: 1007, Steal: 3}, false},
		{"PerCPUFirst", "cpu0 1 2 3 4 5 6 7 8\n", cpuTimes{}, true},
		{"Short", "cpu 1 2 3\n", cpuTimes{}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := parseProcStat([]byte(tt.stat))
			if (err != nil) != tt.wantErr {
				t.Fatalf("parseProcStat() error = %v, want error %v", err, tt.wantErr)
			}
			if got != tt.want {
				t.Fatalf("parseProcStat() = %+v, want %+v", got, tt.want)
			}
		})
	}
}
