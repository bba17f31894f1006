package benchreport

// Targets are issue 14's, one per measure; Bench is the benchmark's name without the
// GOMAXPROCS suffix, Quantity the part after ours_/floor_/ratio_ in its metric units.
var Targets = []Target{
	{"BenchmarkFloorDownload", "req/s", "Storage: authenticated download 100 kB vs http.ServeFile, 16 clients (throughput)", OnRatio, AtLeast, 0.5},
	{"BenchmarkFloorDownload", "cpu-µs/req", "Storage: authenticated download, Go CPU per request vs ServeFile's", OnRatio, AtMost, 1.5},
	{"BenchmarkFloorSignedDownload", "req/s", "Storage: signed-URL download vs http.ServeFile, 16 clients (throughput)", OnRatio, AtLeast, 0.9},
	{"BenchmarkFloorMCPRead/list_projects", "post-µs", "MCP list_projects vs its REST request (plain JSON-RPC POST)", OnRatio, AtMost, 1.15},
	{"BenchmarkFloorMCPRead/list_projects", "sdk-µs", "MCP list_projects vs its REST request (go-sdk client)", OnRatio, AtMost, 1.3},
	{"BenchmarkFloorMCPRead/search_publications", "post-µs", "MCP search_publications vs its REST request (plain JSON-RPC POST)", OnRatio, AtMost, 1.15},
	{"BenchmarkFloorMCPRead/search_publications", "sdk-µs", "MCP search_publications vs its REST request (go-sdk client)", OnRatio, AtMost, 1.3},
	{"BenchmarkFloorMCPRead/get_publication", "post-µs", "MCP get_publication vs its REST request (plain JSON-RPC POST)", OnRatio, AtMost, 1.15},
	{"BenchmarkFloorMCPRead/get_publication", "sdk-µs", "MCP get_publication vs its REST request (go-sdk client)", OnRatio, AtMost, 1.3},
	{"BenchmarkFloorRESTPublication", "µs", "REST publication with embeds over HTTP vs a hand-written net/http endpoint", OnRatio, AtMost, 1.10},
	{"BenchmarkFloorRESTPublication", "inproc-µs", "REST publication with embeds in process vs pgx alone", OnRatio, AtMost, 1.10},
	{"BenchmarkFloorQueueRead", "req/s", "REST review-queue read, 32 clients (floor: hand-written endpoint)", OnOurs, AtLeast, 4000},
	{"BenchmarkFloorDashboard/queue", "p95-ms", "Dashboard queue p95 at 10k publications, 20 users pausing", OnOurs, Below, 50},
	{"BenchmarkFloorDashboard/filtered-queue", "p95-ms", "Dashboard filtered queue p95 at 10k publications, 20 users pausing", OnOurs, Below, 50},
	{"BenchmarkFloorDashboard/detail", "p95-ms", "Dashboard detail p95 at 10k publications, 20 users pausing", OnOurs, Below, 50},
	{"BenchmarkFloorDashboard/queue", "busy-p95-ms", "Dashboard queue p95, 20 requests always in flight", OnOurs, Below, 150},
	{"BenchmarkFloorDashboard/filtered-queue", "busy-p95-ms", "Dashboard filtered queue p95, 20 requests always in flight", OnOurs, Below, 150},
	{"BenchmarkFloorDashboard/detail", "busy-p95-ms", "Dashboard detail p95, 20 requests always in flight", OnOurs, Below, 150},
	{"BenchmarkFloorSearch", "p95-ms", "Search across all statuses at 100k publications, 20 users, under RLS", OnOurs, Below, 50},
	{"BenchmarkFloorSeed100k", "s", "masthead seed --publications 100000", OnOurs, Below, 60},
}
