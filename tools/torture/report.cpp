#include "report.hpp"

#include <fmt/format.h>

#include <fstream>

namespace deadbolt::torture {
namespace {

std::string promise_text(const Promise& p) {
    if (p.exclusion && p.capacity > 1) return "at most " + std::to_string(p.capacity);
    if (p.exclusion && p.fences) return "exclusion+fences";
    if (p.fences) return "fences";
    return "none";
}

std::string faults_text(const nlohmann::json& faults) {
    int total = 0;
    for (const auto& [k, n] : faults.items()) total += n.get<int>();
    if (faults.size() <= 1) return std::to_string(total);
    std::string s = std::to_string(total) + " (";
    for (const auto& [k, n] : faults.items()) s += k + " " + std::to_string(n.get<int>()) + ", ";
    s.resize(s.size() - 2);
    return s + ")";
}

}  // namespace

nlohmann::json judge(const RunFacts& f, const Verdict& v) {
    bool stall = v.max_gap_ns > f.ttl.count() * 2 * 1000000 || f.hung_workers > 0;
    bool fenced = f.mode == "fenced";
    bool safe =
        (!f.promise.exclusion || v.overlaps == 0) &&
        (!f.promise.fences || (v.fence_regressions == 0 && (!fenced || v.stale_writes == 0)));
    bool caught = v.overlaps > 0 || v.stale_writes > 0 || stall;
    // A run in which nobody ever held the lock proves nothing (every try refused as wrong).
    bool pass = f.expect == "violation" ? caught : safe && v.acquisitions > 0;
    return {{"lock", f.lock},
            {"mode", f.mode},
            {"nemesis", f.nemesis},
            {"promises", promise_text(f.promise)},
            {"workers", f.workers},
            {"duration_ms", f.duration.count()},
            {"ttl_ms", f.ttl.count()},
            {"hold_ms", f.hold.count()},
            {"acquisitions", v.acquisitions},
            {"faults", f.faults},
            {"overlaps", v.overlaps},
            {"peak_holders", v.peak_holders},
            {"stale_writes_accepted", v.stale_writes},
            {"fence_regressions", v.fence_regressions},
            {"accepted_writes", v.accepted_writes},
            {"lost_updates", v.lost_updates},
            {"log_entries", f.log_entries},
            {"unknown", v.unknown},
            {"late_grants", v.late_grants},
            {"max_gap_ms", v.max_gap_ns / 1000000},
            {"stall", stall},
            {"hung_workers", f.hung_workers},
            {"expect", f.expect},
            {"pass", pass},
            {"examples", v.examples}};
}

std::string text_row(const nlohmann::json& r) {
    auto s = fmt::format(
        "{:<12} {:<6} {:<11} acq {:>6} faults {:>4} overlaps {:>4} peak {:>2} stale {:>3} lost "
        "{:>5} "
        "unknown {:>3} gap {:>5}ms{}  {}\n",
        r["lock"].get<std::string>(), r["mode"].get<std::string>(), r["nemesis"].get<std::string>(),
        r["acquisitions"].get<long long>(), faults_text(r["faults"]),
        r["overlaps"].get<long long>(), r.value("peak_holders", 0LL),
        r["stale_writes_accepted"].get<long long>(), r["lost_updates"].get<long long>(),
        r["unknown"].get<long long>(), r["max_gap_ms"].get<long long>(),
        r["stall"].get<bool>() ? " STALL" : "", r["pass"].get<bool>() ? "PASS" : "FAIL");
    for (const auto& e : r["examples"]) s += "  e.g. " + e.get<std::string>() + "\n";
    return s;
}

void write_report(const std::string& dir, const nlohmann::json& rows) {
    std::ofstream(dir + "/results.json") << rows.dump(2) << "\n";
    std::ofstream txt(dir + "/table.txt");
    for (const auto& r : rows) txt << text_row(r);
    std::ofstream md(dir + "/table.md");
    md << "| lock | mode | nemesis | promises | acquisitions | faults | overlaps | peak holders | "
          "stale writes accepted | fence regressions | lost updates | unknown outcomes | longest "
          "gap | verdict |\n|---|---|---|---|---:|---|---:|---:|---:|---:|---:|---:|---:|---|\n";
    for (const auto& r : rows)
        md << fmt::format(
            "| {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} ms | {} |\n",
            r["lock"].get<std::string>(), r["mode"].get<std::string>(),
            r["nemesis"].get<std::string>(), r["promises"].get<std::string>(),
            r["acquisitions"].get<long long>(), faults_text(r["faults"]),
            r["overlaps"].get<long long>(), r.value("peak_holders", 0LL),
            r["stale_writes_accepted"].get<long long>(), r["fence_regressions"].get<long long>(),
            r["lost_updates"].get<long long>(), r["unknown"].get<long long>(),
            r["max_gap_ms"].get<long long>(), r["pass"].get<bool>() ? "pass" : "FAIL");
}

}  // namespace deadbolt::torture
