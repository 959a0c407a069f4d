// Report: turns one run's verdict into a judged row (pass/fail against what the
// configuration promises) and the rows of a session into table.md, table.txt, results.json.
#pragma once

#include <chrono>
#include <map>
#include <nlohmann/json.hpp>
#include <string>

#include "checker.hpp"
#include "promise.hpp"

namespace deadbolt::torture {

struct RunFacts {
    std::string lock, mode, nemesis, expect;
    int workers = 0;
    std::chrono::milliseconds duration{0}, ttl{0}, hold{0};
    std::map<std::string, int> faults;  // injected, by kind
    int hung_workers = 0;
    long long log_entries = 0;  // critical sections that reached the data server
    Promise promise;
};

/// The row of one run. pass: with expect "auto", the lock was held at least once and every
/// promised property held; with "violation", the checker caught the lock (overlap, stale
/// write, or a stall past 2 TTLs).
nlohmann::json judge(const RunFacts& f, const Verdict& v);
/// One line (plus examples) for the terminal.
std::string text_row(const nlohmann::json& row);
/// Writes table.md, table.txt and results.json into dir.
void write_report(const std::string& dir, const nlohmann::json& rows);

}  // namespace deadbolt::torture
