// Package scan is `weir scan`: it launches the servers of an MCP client
// configuration the way the client would, asks each what it offers, shuts
// it down, and reports what Weir makes of it — the labels each tool would
// get, what the tool-poisoning detectors find in the definitions, the pin
// status, and whether the configuration as a whole holds the lethal
// trifecta. Package clients reads the configuration; this package never
// writes it.
//
// # Scanning
//
//	cfg, err := clients.Read(loc)
//	...
//	rep := scan.NewReport([]scan.ConfigReport{scan.Config(ctx, cfg, scan.Options{Timeout: 10 * time.Second})})
//	rep.Finish(version, detect.High)
//	out, err := rep.JSON()
//
// [Config] scans one file; [Servers] scans a list of [clients.Server]
// entries. A stdio server is started with its command, args, env (over
// [Options].Environ, its envFile in between) and cwd; a wrapped entry is
// scanned through the server behind its `weir run`, labelled with the
// policy and pinned under the name that weir run uses. Each is started
// with [transport.StartCommand] in a process group of its own and bounded
// by [Options].Timeout from launch to shutdown: on the deadline the whole
// group is killed, so a launcher (npx, uvx) and whatever it started go
// together. HTTP and SSE servers are contacted only with [Options].Remote.
//
// A server is listed with initialize, then tools/list, prompts/list,
// resources/list and resources/templates/list for the capabilities it
// declares, following cursors. A server whose initialize or tools/list
// fails is reported as [StatusFailed] with one sentence saying what it did
// ("did not answer initialize within 3s; stopped", "exited with status 2
// before answering initialize", "wrote something other than JSON-RPC to
// stdout during initialize: ...") and the end of its stderr. A prompts or
// resources listing that fails after the tools were listed does not fail
// the server: its tools are reported ([StatusScanned]) and a Note says
// which listing failed and why.
//
// # Judging
//
// Everything the scanner decides about a listed server is in one
// function, judge (judge.go): labels from [engine.Label], findings from
// [detect.ScanCatalogue], the definition hash, and the pin status from
// [Options].PinStatus. [AssessTrifecta] then gives the verdict for a
// configuration: the tools supplying each leg, and whether every server
// supplying one runs behind Weir. When no server the client starts could
// be scanned, the verdict is unknown ([Trifecta].Known false), never
// "absent".
//
// # Reports
//
// [Report] is a whole scan: [Report.JSON] is the stable `--format json`
// output (keys sorted, field names part of the interface, documented on
// the types), [Report.SARIF] is SARIF 2.1.0 for code scanning, and
// [Report.WriteText] is what people read.
package scan
