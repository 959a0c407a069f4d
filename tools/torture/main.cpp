// deadbolt-torture: worker processes contend for one lock while a nemesis injects faults;
// the checker then decides from the recorded history whether the lock kept its promises.
//   deadbolt-torture --lock deadbolt --mode fenced --nemesis pause --workers 8 --duration 10m
#include <signal.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <atomic>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <random>
#include <thread>

#include "checker.hpp"
#include "deadbolt/duration.hpp"
#include "locks.hpp"
#include "redis_server.hpp"
#include "worker.hpp"

using namespace deadbolt::torture;
using std::chrono::milliseconds;

namespace {

void sleep_ms(std::int64_t ms) {
    std::this_thread::sleep_for(milliseconds(ms));
}

}  // namespace

int main(int argc, char** argv) {
    CLI::App app{"deadbolt-torture: mutual exclusion and fencing under injected faults"};
    std::string lock = "deadbolt", mode = "fenced", nemesis = "pause", duration_s = "10s",
                ttl_s = "500ms", results, expect = "auto";
    int workers = 8;
    app.add_option("--lock", lock,
                   "deadbolt | setnx-del | incr-expire | setnx-getset | setnx-nottl");
    app.add_option("--mode", mode, "plain | fenced (writes carry the lease's fence)");
    app.add_option("--nemesis", nemesis,
                   "none | pause (SIGSTOP a holder past its TTL, then SIGCONT)");
    app.add_option("--workers", workers, "Worker processes (default 8)")->check(CLI::Range(1, 64));
    app.add_option("--duration", duration_s, "How long to run (default 10s)");
    app.add_option("--ttl", ttl_s, "Lock TTL (default 500ms)");
    app.add_option("--results", results,
                   "Folder for histories and result.json (default: a temp dir, removed)");
    app.add_option("--expect", expect,
                   "auto (a lock's own promises) | violation (a negative control must be caught)");
    CLI11_PARSE(app, argc, argv);
    std::string why;
    auto duration = deadbolt::parse_duration(duration_s, &why);
    auto ttl = deadbolt::parse_duration(ttl_s, &why);
    if (!duration || !ttl || !known_lock(lock) || (mode != "plain" && mode != "fenced") ||
        (nemesis != "none" && nemesis != "pause" && nemesis != "kill") ||
        (expect != "auto" && expect != "violation")) {
        std::cerr << "deadbolt-torture: bad arguments " << why << " (see --help)\n";
        return 64;
    }
    bool fenced = mode == "fenced";
    if (fenced && lock != "deadbolt") {
        std::cerr << "deadbolt-torture: only deadbolt hands out fences; use --mode plain\n";
        return 64;
    }

    deadbolt::test::RedisServer lock_srv, data_srv;
    bool keep = !results.empty();
    if (!keep) results = lock_srv.dir() + "/histories";
    std::filesystem::create_directories(results);
    auto* holding = static_cast<std::atomic<int>*>(mmap(nullptr, sizeof(std::atomic<int>) * workers,
                                                        PROT_READ | PROT_WRITE,
                                                        MAP_SHARED | MAP_ANONYMOUS, -1, 0));
    for (int i = 0; i < workers; ++i) new (&holding[i]) std::atomic<int>(0);
    std::int64_t end_ns = now_ns() + std::int64_t{duration->count()} * 1000000;

    auto spawn = [&](int i) {
        WorkerConfig c{i,
                       lock,
                       fenced,
                       lock_srv.port(),
                       data_srv.port(),
                       *ttl,
                       end_ns,
                       results + "/worker-" + std::to_string(i) + ".jsonl",
                       &holding[i]};
        pid_t pid = fork();
        if (pid == 0) {
            int rc = 70;
            try {
                rc = run_worker(c);
            } catch (const std::exception& e) {
                std::cerr << "worker " << i << ": " << e.what() << "\n";
            }
            _exit(rc);
        }
        return pid;
    };
    std::vector<pid_t> pids;
    pids.reserve(workers);
    for (int i = 0; i < workers; ++i) pids.push_back(spawn(i));

    int faults = 0;
    std::mt19937 rng(std::random_device{}());
    while (nemesis != "none" && now_ns() < end_ns - ttl->count() * 3000000) {
        sleep_ms(ttl->count());
        std::vector<int> holders;
        for (int i = 0; i < workers; ++i)
            if (holding[i].load()) holders.push_back(i);
        if (holders.empty()) continue;
        int victim = holders[rng() % holders.size()];
        if (nemesis == "pause") {
            kill(pids[victim], SIGSTOP);  // like a GC pause or a swapped-out VM, past the TTL
            sleep_ms(ttl->count() * 5 / 2);
            kill(pids[victim], SIGCONT);
        } else {
            kill(pids[victim], SIGKILL);  // a holder that dies without releasing
            waitpid(pids[victim], nullptr, 0);
            holding[victim].store(0);
            pids[victim] = spawn(victim);  // appends to the same history
        }
        ++faults;
    }

    std::int64_t give_up = end_ns + (5000 + ttl->count() * 4) * 1000000;
    std::size_t done = 0;
    while (done < pids.size() && now_ns() < give_up) {
        for (auto& p : pids)
            if (p > 0 && waitpid(p, nullptr, WNOHANG) == p) p = -1, ++done;
        sleep_ms(20);
    }
    int hung = 0;
    for (auto p : pids)
        if (p > 0) kill(p, SIGKILL), waitpid(p, nullptr, 0), ++hung;

    std::vector<Event> history;
    for (int i = 0; i < workers; ++i) {
        std::ifstream in(results + "/worker-" + std::to_string(i) + ".jsonl");
        auto h = read_history(in);
        history.insert(history.end(), h.begin(), h.end());
    }
    auto reg = data_srv.raw().cmd({"GET", "register"});
    std::int64_t final_register = reg.str.empty() ? 0 : std::stoll(reg.str);
    Verdict v = check(history, final_register, fenced);
    // A lock stuck for good shows as silence from the last acquisition to the end.
    v.max_gap_ns = std::max(v.max_gap_ns, end_ns - v.last_acquisition_ns);
    bool stall = v.max_gap_ns > std::int64_t{ttl->count()} * 2 * 1000000 || hung > 0;

    bool safe = v.overlaps == 0 && v.fence_regressions == 0 && (!fenced || v.stale_writes == 0);
    bool caught = v.overlaps > 0 || v.stale_writes > 0 || stall;
    bool pass = expect == "violation" ? caught : (promises_safety(lock) ? safe : true);

    nlohmann::json j{{"lock", lock},
                     {"mode", mode},
                     {"nemesis", nemesis},
                     {"workers", workers},
                     {"duration_ms", duration->count()},
                     {"ttl_ms", ttl->count()},
                     {"acquisitions", v.acquisitions},
                     {"faults", faults},
                     {"overlaps", v.overlaps},
                     {"stale_writes_accepted", v.stale_writes},
                     {"fence_regressions", v.fence_regressions},
                     {"accepted_writes", v.accepted_writes},
                     {"lost_updates", v.lost_updates},
                     {"unknown", v.unknown},
                     {"max_gap_ms", v.max_gap_ns / 1000000},
                     {"stall", stall},
                     {"hung_workers", hung},
                     {"expect", expect},
                     {"pass", pass},
                     {"examples", v.examples}};
    std::ofstream(results + "/result.json") << j.dump(2) << "\n";
    std::printf(
        "%-13s %-6s %-7s acq %5lld faults %3d overlaps %4lld stale %3lld lost %4lld "
        "unknown %3lld gap %5lldms%s  %s\n",
        lock.c_str(), mode.c_str(), nemesis.c_str(), (long long)v.acquisitions, faults,
        (long long)v.overlaps, (long long)v.stale_writes, (long long)v.lost_updates,
        (long long)v.unknown, (long long)(v.max_gap_ns / 1000000), stall ? " STALL" : "",
        pass ? "PASS" : "FAIL");
    for (const auto& e : v.examples) std::printf("  e.g. %s\n", e.c_str());
    if (!keep) std::filesystem::remove_all(results);
    return pass ? 0 : 1;
}
