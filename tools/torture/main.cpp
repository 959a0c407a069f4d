// deadbolt-torture: worker processes contend for one lock while a nemesis injects faults;
// the checker then decides from the recorded history whether the lock kept its promises.
//   deadbolt-torture --lock deadbolt --mode plain,fenced --nemesis all --duration 30s
//                    --results results/torture
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <atomic>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <random>
#include <thread>

#include "deadbolt/duration.hpp"
#include "locks.hpp"
#include "nemesis.hpp"
#include "report.hpp"
#include "worker.hpp"

using namespace deadbolt::torture;
using std::chrono::milliseconds;

namespace {

// Cuts a history back to its last complete line, so the replacement worker's events do not
// continue a line its killed predecessor never finished (that event was never recorded).
void drop_torn_line(const std::string& path) {
    std::error_code ec;
    auto size = std::filesystem::file_size(path, ec);
    if (ec || size == 0) return;
    std::ifstream in(path, std::ios::binary);
    std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    auto keep = text.rfind('\n');
    std::filesystem::resize_file(path, keep == std::string::npos ? 0 : keep + 1, ec);
}

struct RunConfig {
    std::string lock, mode, nemesis, expect, dir;
    int workers;
    milliseconds duration, ttl, hold;
};

// One run: fresh servers, W workers, the nemesis until shortly before the end, then the check.
nlohmann::json run_one(const RunConfig& rc) {
    std::filesystem::remove_all(rc.dir);  // histories are appended to: start clean
    std::filesystem::create_directories(rc.dir);
    bool fenced = rc.mode == "fenced";
    LockSide side(rc.dir, rc.workers,
                  {.aof = needs_aof(rc.nemesis),
                   .standby = needs_standby(rc.nemesis),
                   .nodes = lock_nodes(rc.lock),
                   .sentinels = uses_sentinel(rc.lock),
                   .cluster = uses_cluster(rc.lock),
                   .etcd = uses_etcd(rc.lock),
                   .zk = uses_zk(rc.lock),
                   .session = rc.ttl,
                   .database = uses_database(rc.lock)});
    deadbolt::test::RedisServer data_srv;
    int w = rc.workers;
    auto* holding = static_cast<std::atomic<int>*>(mmap(nullptr, sizeof(std::atomic<int>) * w,
                                                        PROT_READ | PROT_WRITE,
                                                        MAP_SHARED | MAP_ANONYMOUS, -1, 0));
    for (int i = 0; i < w; ++i) new (&holding[i]) std::atomic<int>(0);
    std::vector<std::unique_ptr<SteeredClock>> clocks;  // each worker's lease clock
    clocks.reserve(w);
    for (int i = 0; i < w; ++i)
        clocks.push_back(std::make_unique<SteeredClock>(
            rc.dir + "/worker-" + std::to_string(i) + ".clock", CLOCK_MONOTONIC));
    std::int64_t end_ns = now_ns() + std::int64_t{rc.duration.count()} * 1000000;
    auto history_of = [&](int i) { return rc.dir + "/worker-" + std::to_string(i) + ".jsonl"; };

    auto spawn = [&](int i) {
        holding[i].store(0);
        drop_torn_line(history_of(i));  // a killed worker may have died mid-line
        WorkerConfig c{
            i,      rc.lock, fenced, side.url_for(i), side.port_for(i), data_srv.port(),
            rc.ttl, rc.hold, end_ns, history_of(i),   &holding[i],      clocks[i]->page()};
        pid_t pid = fork();
        if (pid == 0) {
            int code = 70;
            try {
                code = run_worker(c);
            } catch (const std::exception& e) {
                std::cerr << "worker " << i << ": " << e.what() << "\n";
            }
            _exit(code);
        }
        return pid;
    };
    std::vector<pid_t> pids;
    pids.reserve(w);
    for (int i = 0; i < w; ++i) pids.push_back(spawn(i));

    std::map<std::string, int> faults;
    std::mt19937 rng(std::random_device{}());
    Targets t{side,
              pids,
              clocks,
              spawn,
              [&] {
                  std::vector<int> h;
                  for (int i = 0; i < w; ++i)
                      if (holding[i].load()) h.push_back(i);
                  return h;
              },
              rc.ttl,
              rng};
    while (rc.nemesis != "none" && now_ns() < end_ns - rc.ttl.count() * 4000000) {
        std::this_thread::sleep_for(rc.ttl);
        auto did = inject(rc.nemesis, t);
        if (!did.empty()) ++faults[did];
    }

    std::int64_t give_up = end_ns + (5000 + rc.ttl.count() * 4) * 1000000;
    std::size_t done = 0;
    while (done < pids.size() && now_ns() < give_up) {
        for (auto& p : pids)
            if (p > 0 && waitpid(p, nullptr, WNOHANG) == p) p = -1, ++done;
        std::this_thread::sleep_for(milliseconds(20));
    }
    int hung = 0;
    for (auto p : pids)
        if (p > 0) kill(p, SIGKILL), waitpid(p, nullptr, 0), ++hung;
    munmap(holding, sizeof(std::atomic<int>) * w);

    std::vector<Event> history;
    for (int i = 0; i < w; ++i) {
        std::ifstream in(history_of(i));
        auto h = read_history(in);
        history.insert(history.end(), h.begin(), h.end());
    }
    auto data = data_srv.raw();
    auto reg = data.cmd({"GET", "register"});
    std::int64_t final_register = reg.str.empty() ? 0 : std::stoll(reg.str);
    Verdict v = check(history, final_register, fenced, capacity(rc.lock));
    // A lock stuck for good shows as silence from the last acquisition to the end.
    v.max_gap_ns = std::max(v.max_gap_ns, end_ns - v.last_acquisition_ns);

    RunFacts f;
    f.lock = rc.lock;
    f.mode = rc.mode;
    f.nemesis = rc.nemesis;
    f.expect = rc.expect;
    f.workers = rc.workers;
    f.duration = rc.duration;
    f.ttl = rc.ttl;
    f.hold = rc.hold;
    f.faults = faults;
    f.hung_workers = hung;
    f.log_entries = data.cmd({"LLEN", "log"}).integer;
    f.promise = promised(rc.lock, rc.nemesis);
    auto row = judge(f, v);
    std::ofstream(rc.dir + "/result.json") << row.dump(2) << "\n";
    return row;
}

std::vector<std::string> split(const std::string& s) {
    std::vector<std::string> out;
    std::stringstream in(s);
    for (std::string part; std::getline(in, part, ',');) out.push_back(part);
    return out;
}

}  // namespace

int main(int argc, char** argv) {
    CLI::App app{"deadbolt-torture: mutual exclusion and fencing under injected faults"};
    std::string lock = "deadbolt", modes = "fenced", nemeses = "pause", duration_s = "10s",
                ttl_s = "500ms", hold_s = "20ms", results, expect = "auto";
    int workers = 8;
    app.add_option(
        "--lock", lock,
        "deadbolt | deadbolt-object (one Mutex object) | deadbolt-fair | deadbolt-write (RWLock "
        "writer) | deadbolt-reentrant | "
        "deadbolt-multi | deadbolt-leader | deadbolt-semaphore:N, each optionally @redlock:N, "
        "@sentinel, @cluster, @etcd, @zk, @pg, @mariadb or @memcached (e.g. "
        "deadbolt-reentrant@redlock:3; "
        "deadbolt-redlock:N "
        "= "
        "deadbolt@redlock:N) | setnx-del | incr-expire | setnx-getset | setnx-nottl");
    app.add_option("--mode", modes, "plain | fenced | plain,fenced (writes carry the fence)");
    app.add_option("--nemesis", nemeses,
                   "none | pause | kill | stall | cut | restart | restart-aof | failover | "
                   "clock-jump | clock-rate | clock-skew | sentinel-failover | cluster-failover | "
                   "member-restart | leader-kill (etcd) | mixed, a "
                   "comma list, or all (every single one that fits the lock)");
    app.add_option("--workers", workers, "Worker processes (default 8)")->check(CLI::Range(1, 64));
    app.add_option("--duration", duration_s, "How long each run lasts (default 10s)");
    app.add_option("--ttl", ttl_s, "Lock TTL (default 500ms)");
    app.add_option("--hold", hold_s, "Longest think time inside the section (default 20ms)");
    app.add_option("--results", results,
                   "Folder for table.md, results.json and each run's histories "
                   "(default: a temp dir, removed)");
    app.add_option("--expect", expect,
                   "auto (a lock's own promises) | violation (a negative control must be caught)");
    CLI11_PARSE(app, argc, argv);
    std::string why;
    auto duration = deadbolt::parse_duration(duration_s, &why);
    auto ttl = deadbolt::parse_duration(ttl_s, &why);
    auto hold = deadbolt::parse_duration(hold_s, &why);
    auto mode_list = split(modes);
    auto nemesis_list = nemeses == "all" ? nemesis_kinds() : split(nemeses);
    bool ok = duration && ttl && hold && known_lock(lock) &&
              (expect == "auto" || expect == "violation") && !mode_list.empty() &&
              !nemesis_list.empty();
    for (const auto& m : mode_list) ok = ok && (m == "plain" || m == "fenced");
    for (const auto& n : nemesis_list) ok = ok && known_nemesis(n);
    if (!known_lock(lock))
        why = "unknown lock '" + lock + "' (Redlock takes neither deadbolt-fair nor semaphores)";
    if (!ok) {
        std::cerr << "deadbolt-torture: bad arguments " << why << " (see --help)\n";
        return 64;
    }
    if (!hands_out_fences(lock) && modes != "plain") {
        std::cerr << "deadbolt-torture: only deadbolt's exclusive locks hand out fences; use "
                     "--mode plain\n";
        return 64;
    }

    if (nemeses == "all") nemesis_list = nemeses_for(lock);
    for (const auto& n : nemesis_list) {
        if (nemesis_fits(lock, n)) continue;
        std::string fit;
        for (const auto& f : nemeses_for(lock)) fit += (fit.empty() ? "" : ", ") + f;
        std::cerr << "deadbolt-torture: nemesis " << n << " does not apply to " << lock
                  << "; it takes none, " << fit << "\n";
        return 64;
    }

    bool keep = !results.empty();
    if (!keep) {
        char tmpl[] = "/tmp/deadbolt-torture-XXXXXX";
        results = mkdtemp(tmpl) ? tmpl : "/tmp/deadbolt-torture";
    }
    auto rows = nlohmann::json::array();
    bool pass = true;
    for (const auto& n : nemesis_list)
        for (const auto& m : mode_list) {
            std::string dir = results;
            dir.append("/").append(lock).append("-").append(m).append("-").append(n);
            RunConfig rc{lock, m, n, expect, dir, workers, *duration, *ttl, *hold};
            nlohmann::json row;
            try {
                row = run_one(rc);
            } catch (const std::exception& e) {  // the harness failed, not the lock
                std::cerr << "deadbolt-torture: " << n << "/" << m << ": " << e.what() << "\n";
                return 70;
            }
            std::cout << text_row(row) << std::flush;
            pass = pass && row["pass"].get<bool>();
            rows.push_back(std::move(row));
        }
    write_report(results, rows);
    if (keep)
        std::cout << "results: " << results << "/table.md, results.json\n";
    else
        std::filesystem::remove_all(results);
    return pass ? 0 : 1;
}
