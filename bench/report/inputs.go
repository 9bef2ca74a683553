package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// The shapes below mirror the files the bench programs write; they are
// decoded leniently (unknown fields ignored), so a bench program can add
// fields without breaking the report.

// coreFile is bench/results/core.json (bench/core).
type coreFile struct {
	Date     string   `json:"date"`
	Commit   string   `json:"commit"`
	Machine  string   `json:"machine"`
	Go       string   `json:"go"`
	Commands []string `json:"commands"`
	Results  []struct {
		Name    string             `json:"name"`
		Metrics map[string]float64 `json:"metrics"`
	} `json:"results"`
}

func (c *coreFile) metric(name, metric string) (float64, bool) {
	for _, r := range c.Results {
		if r.Name == name {
			v, ok := r.Metrics[metric]
			return v, ok
		}
	}
	return 0, false
}

// agentdojoFile is bench/results/agentdojo-CORPUS.json (bench/agentdojo).
type agentdojoFile struct {
	Meta struct {
		Date        string            `json:"date"`
		Commit      string            `json:"commit"`
		Uncommitted []string          `json:"uncommitted"`
		Machine     string            `json:"machine"`
		Go          string            `json:"go"`
		Command     string            `json:"command"`
		Corpus      string            `json:"corpus"`
		Weir        string            `json:"weir"`
		Jobs        int               `json:"jobs"`
		Replays     int               `json:"replays"`
		TotalSecs   float64           `json:"total_wall_seconds"`
		Policies    map[string]string `json:"policies"`
		Presets     []string          `json:"presets"`
		MsPerReplay float64           `json:"ms_per_replay_wall"`
		// Channels and HumanReplays are absent from files written before
		// bench/agentdojo replayed the attentive human for real.
		Channels     []string `json:"human_channels"`
		HumanReplays int      `json:"human_replays"`
		HumanAll     bool     `json:"human_all"`
	} `json:"meta"`
	Definitions map[string]string `json:"definitions"`
	Corpus      struct {
		Transcripts     int            `json:"transcripts"`
		Calls           int            `json:"calls"`
		ScorableAttacks int            `json:"scorable_attacks"`
		PartialHijacks  int            `json:"partial_hijacks"`
		Benign          int            `json:"benign_utility_runs"`
		AttackUtility   int            `json:"attack_runs_with_utility"`
		BySuite         map[string]int `json:"transcripts_by_suite"`
		ByModel         map[string]int `json:"transcripts_by_model"`
	} `json:"corpus"`
	Presets []*adPreset `json:"presets"`
}

type adPreset struct {
	Preset         string             `json:"preset"`
	Overall        *adCell            `json:"overall"`
	Suites         map[string]*adCell `json:"suites"`
	Models         map[string]*adCell `json:"models"`
	InjectionTasks []*adTask          `json:"injection_tasks"`
	Rules          []struct {
		Rule           string `json:"rule"`
		BenignCalls    int    `json:"benign_calls"`
		UserCalls      int    `json:"user_calls_under_attack"`
		FirstSinkCalls int    `json:"first_sink_injection_calls"`
	} `json:"rules"`
}

type reading[T any] struct {
	NoHuman T `json:"no_human"`
	Human   T `json:"attentive_human"`
}

type adCell struct {
	Attacks        reading[adAttack] `json:"scorable_attacks"`
	PartialHijacks reading[adAttack] `json:"partial_hijacks"`
	Benign         reading[adUser]   `json:"benign"`
	UnderAttack    reading[adUser]   `json:"user_calls_under_attack"`
	// Real is the attentive human for real, per approval channel
	// (elicitation, input_required, out_of_band); absent from older files.
	Real map[string]*adHuman `json:"real_human"`
}

// adHuman is one approval channel's real walks (bench/agentdojo HumanStats).
type adHuman struct {
	Attacks        adAttack `json:"scorable_attacks"`
	PartialHijacks adAttack `json:"partial_hijacks"`
	Benign         struct {
		Transcripts        int     `json:"transcripts"`
		TranscriptsStopped int     `json:"transcripts_with_a_stop"`
		Prompts            int     `json:"human_prompts"`
		TranscriptRate     float64 `json:"transcript_fp_rate"`
		PromptsPerRun      float64 `json:"prompts_per_transcript"`
	} `json:"benign"`
	AttackPrompts       int            `json:"attack_prompts"`
	AttackPromptsPerRun float64        `json:"attack_prompts_per_transcript"`
	Approvals           map[string]int `json:"approval_records"`
	Anomalies           int            `json:"walks_with_anomalies"`
	// Replayed and Inferred: walks replayed through weir run, and those
	// taken from the monitor-mode verdicts (no escalation to replay).
	Replayed *int `json:"walks_replayed"`
	Inferred *int `json:"walks_inferred"`
}

type adAttack struct {
	N              int     `json:"n"`
	StoppedSink    int     `json:"stopped_sink"`
	StoppedSupport int     `json:"stopped_support"`
	EndedBenign    int     `json:"ended_on_user_call"`
	Passed         int     `json:"passed"`
	StopRate       float64 `json:"stop_rate"`
	Lenient        float64 `json:"stop_rate_lenient"`
	EndedBefore    float64 `json:"ended_before_attack_rate"`
}

type adUser struct {
	Transcripts        int     `json:"transcripts"`
	TranscriptsStopped int     `json:"transcripts_with_a_stop"`
	Calls              int     `json:"calls"`
	CallsStopped       int     `json:"calls_stopped"`
	Prompts            int     `json:"human_prompts"`
	TranscriptRate     float64 `json:"transcript_fp_rate"`
	CallRate           float64 `json:"call_fp_rate"`
	PromptsPerRun      float64 `json:"prompts_per_transcript"`
}

type adTask struct {
	Suite         string  `json:"suite"`
	ID            string  `json:"id"`
	Goal          string  `json:"goal"`
	Scorable      int     `json:"scorable"`
	StoppedSink   int     `json:"stopped_sink"`
	StopRate      float64 `json:"stop_rate"`
	Lenient       float64 `json:"stop_rate_lenient"`
	StopRateHuman float64 `json:"stop_rate_attentive_human"`
	// Passed and EndedEarlier are absent from files written before
	// bench/agentdojo recorded them.
	Passed       *int     `json:"passed"`
	EndedEarlier *int     `json:"ended_earlier"`
	Unstopped    []string `json:"unstopped_examples"`
	// StopRateReal: the strict stop rate with a real human, per channel.
	StopRateReal map[string]float64 `json:"stop_rate_real_human"`
}

// overheadFile is bench/results/overhead.json (bench/overhead).
type overheadFile struct {
	Meta   ovMeta `json:"meta"`
	Method struct {
		Paths   map[string]string `json:"paths"`
		Latency []struct {
			Size       string `json:"size"`
			Iterations int    `json:"iterations"`
			Warmup     int    `json:"warmup"`
		} `json:"latency"`
		Throughput struct {
			ResultBytes     int     `json:"result_bytes"`
			Concurrency     []int   `json:"concurrency"`
			Rounds          int     `json:"rounds"`
			SecondsPerRound float64 `json:"seconds_per_round"`
		} `json:"throughput"`
	} `json:"method"`
	Servers []*ovServer `json:"servers"`
	// LongSession and ToolsList are measured apart from the rest (`--only
	// long,list`), each with its own meta; older files have neither.
	LongSession *ovLong `json:"long_session"`
	ToolsList   *ovList `json:"tools_list"`
}

type ovMemory struct {
	RSSMB  float64 `json:"rss_mb"`
	HWMMB  float64 `json:"hwm_mb"`
	AnonMB float64 `json:"anon_mb"`
	FileMB float64 `json:"file_mb"`
}

type ovLong struct {
	Meta        ovMeta   `json:"meta"`
	Server      string   `json:"server"`
	Policy      string   `json:"policy"`
	ResultBytes int      `json:"result_bytes"`
	Idle        ovMemory `json:"idle"`
	Checkpoints []struct {
		Results   int     `json:"results"`
		PrivateMB float64 `json:"private_mb"`
		ovMemory
		StateDBMB   float64 `json:"state_db_mb"`
		StateWALMB  float64 `json:"state_wal_mb"`
		Seconds     float64 `json:"seconds"`
		PerResultUS float64 `json:"per_result_p50_us"`
	} `json:"checkpoints"`
	Join *struct {
		Samples          int     `json:"samples"`
		FromStartMS      float64 `json:"from_start_p50_ms"`
		FromStartMaxMS   float64 `json:"from_start_max_ms"`
		FromRequestMS    float64 `json:"from_request_p50_ms"`
		FromRequestMaxMS float64 `json:"from_request_max_ms"`
		ovMemory
		Rule string `json:"rule"`
	} `json:"join"`
	Fleet *struct {
		Proxies    int     `json:"proxies"`
		RSSMB      float64 `json:"rss_mb"`
		PSSMB      float64 `json:"pss_mb"`
		USSMB      float64 `json:"uss_mb"`
		TotalPSSMB float64 `json:"total_pss_mb"`
		TotalRSSMB float64 `json:"total_rss_mb"`
	} `json:"fleet"`
}

type ovList struct {
	Meta          ovMeta                   `json:"meta"`
	Catalogue     string                   `json:"catalogue"`
	Tools         int                      `json:"tools"`
	ListBytes     int                      `json:"list_bytes"`
	Starts        int                      `json:"starts"`
	Iterations    int                      `json:"iterations"`
	First         map[string]ovPercentiles `json:"first_listing"`
	Repeated      map[string]ovPercentiles `json:"repeated_listing"`
	FirstRatio    float64                  `json:"first_p50_vs_direct"`
	RepeatedRatio float64                  `json:"repeated_p50_vs_direct"`
	ToolsSeen     map[string]int           `json:"tools_seen"`
}

type ovMeta struct {
	Date        string   `json:"date"`
	Commit      string   `json:"commit"`
	Uncommitted []string `json:"uncommitted"`
	Machine     struct {
		CPU    string `json:"cpu"`
		Cores  int    `json:"cores"`
		OS     string `json:"os"`
		Kernel string `json:"kernel"`
		Arch   string `json:"arch"`
	} `json:"machine"`
	Go          string    `json:"go"`
	Node        string    `json:"node"`
	Weir        string    `json:"weir"`
	Command     string    `json:"command"`
	Quick       bool      `json:"quick"`
	LoadBefore  []float64 `json:"load_before"`
	LoadAfter   []float64 `json:"load_after"`
	WallSeconds float64   `json:"wall_seconds"`
}

type ovServer struct {
	Server  string `json:"server"`
	Command string `json:"command"`
	Request string `json:"request"`
	Latency []struct {
		Size          string                   `json:"size"`
		Samples       int                      `json:"samples"`
		Paths         map[string]ovPercentiles `json:"paths"`
		AddedVsDirect map[string]ovPercentiles `json:"added_vs_direct"`
		AddedVsRelay  map[string]ovPercentiles `json:"added_vs_relay"`
		ProxyCPU      map[string]float64       `json:"proxy_cpu_us_per_call"`
		Settle        map[string]ovPercentiles `json:"quiet_after_answer"`
	} `json:"latency"`
	Throughput []struct {
		Concurrency int `json:"concurrency"`
		ResultBytes int `json:"result_bytes"`
		Paths       map[string]struct {
			Calls       int     `json:"calls"`
			Seconds     float64 `json:"seconds"`
			CallsPerSec float64 `json:"calls_per_sec"`
			P50         float64 `json:"p50_us"`
			P99         float64 `json:"p99_us"`
		} `json:"paths"`
	} `json:"throughput"`
	PeakRSS map[string]struct {
		MB float64 `json:"peak_mb"`
	} `json:"peak_rss"`
}

type ovPercentiles struct {
	P50 float64 `json:"p50_us"`
	P95 float64 `json:"p95_us"`
	P99 float64 `json:"p99_us"`
}

// inputs are the results files found, each with the path the report
// names it by.
type inputs struct {
	core      *coreFile
	corePath  string
	agentdojo []*agentdojoFile
	adPaths   []string
	// adSkipped are agentdojo files of narrowed runs (-partial), which the
	// report leaves out.
	adSkipped []string
	overhead  *overheadFile
	ovPath    string
}

// load reads the results in dir. A missing file is not an error (its
// sections say what to run); a malformed one is.
func load(dir string) (*inputs, error) {
	in := &inputs{}
	read := func(name string, v any) (string, bool, error) {
		p := filepath.ToSlash(filepath.Join(dir, name))
		data, err := os.ReadFile(filepath.Join(dir, name))
		if os.IsNotExist(err) {
			return p, false, nil
		}
		if err != nil {
			return p, false, err
		}
		if err := json.Unmarshal(data, v); err != nil {
			return p, false, fmt.Errorf("%s: %w", p, err)
		}
		return p, true, nil
	}
	var c coreFile
	p, ok, err := read("core.json", &c)
	if err != nil {
		return nil, err
	}
	if ok {
		in.core, in.corePath = &c, p
	}
	var o overheadFile
	p, ok, err = read("overhead.json", &o)
	if err != nil {
		return nil, err
	}
	if ok {
		in.overhead, in.ovPath = &o, p
	}
	names, err := filepath.Glob(filepath.Join(dir, "agentdojo-*.json"))
	if err != nil {
		return nil, err
	}
	slices.Sort(names)
	for _, n := range names {
		base := filepath.Base(n)
		if strings.HasSuffix(base, "-partial.json") {
			in.adSkipped = append(in.adSkipped, filepath.ToSlash(filepath.Join(dir, base)))
			continue
		}
		var a agentdojoFile
		p, _, err := read(base, &a)
		if err != nil {
			return nil, err
		}
		if len(a.Presets) == 0 {
			return nil, fmt.Errorf("%s: no presets", p)
		}
		in.agentdojo = append(in.agentdojo, &a)
		in.adPaths = append(in.adPaths, p)
	}
	return in, nil
}
