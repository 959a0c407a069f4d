// deadbolt-bench: one scenario, one contender (deadbolt, or raw hiredis sending the same
// scripts), one JSON object out. bench/run.py runs it beside the peers' drivers.
//   deadbolt-bench cycle --contender raw --threads 16 --seconds 3 --port 6379
#include <cstdio>
#include <exception>
#include <string>

#include "backends/redis/scripts.hpp"
#include "scenarios.hpp"

int main(int argc, char** argv) {
    using namespace deadbolt::bench;
    try {
        if (argc == 3 && std::string(argv[1]) == "script") {  // for redis-benchmark
            const auto& s = std::string(argv[2]) == "acquire" ? deadbolt::detail::acquire_script()
                                                              : deadbolt::detail::release_script();
            std::fwrite(s.source.data(), 1, s.source.size(), stdout);
            return 0;
        }
        Args a = parse(argc, argv);
        if (a.scenario == "cycle" && a.contender == "deadbolt-async") return cycle_async(a);
        if (a.scenario == "cycle" && a.contender == "loop-blocking") return cycle_loop_blocking(a);
        if (a.scenario == "cycle" && a.contender == "raw-polled") return cycle_polled(a);
#ifdef DEADBOLT_BENCH_ETCD
        if (a.scenario == "cycle" && a.contender == "raw-etcd") return cycle_raw_etcd(a);
#endif
#ifdef DEADBOLT_BENCH_ZK
        if (a.scenario == "cycle" && a.contender == "raw-zk") return cycle_raw_zk(a);
#endif
#ifdef DEADBOLT_BENCH_SQL
        if (a.scenario == "cycle" && a.contender == "raw-pg") return cycle_raw_pg(a);
        if (a.scenario == "cycle" && a.contender == "raw-my") return cycle_raw_my(a);
#endif
#ifdef DEADBOLT_BENCH_MC
        if (a.scenario == "cycle" && a.contender == "raw-mc") return cycle_raw_mc(a);
#endif
        if (a.scenario == "cycle") return cycle(a);
        if (a.scenario == "contend") return contend(a);
        if (a.scenario == "wait") return wait(a);
        if (a.scenario == "renew") return renew(a);
        std::fprintf(stderr,
                     "usage: deadbolt-bench cycle|contend|wait|renew [--options] | script "
                     "acquire|release\n");
        return 64;
    } catch (const std::exception& e) {
        std::fprintf(stderr, "deadbolt-bench: %s\n", e.what());
        return 70;
    }
}
