// This process's threads (from /proc), for tests of when deadbolt starts its background
// threads and of how often they wake.
#pragma once

#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <string_view>

namespace deadbolt::test {

/// Those not named `except` (their comm), when given.
inline int threads_of_this_process(std::string_view except = {}) {
    int n = 0;
    for (const auto& t : std::filesystem::directory_iterator("/proc/self/task")) {
        std::string name;
        if (!except.empty()) std::getline(std::ifstream(t.path() / "comm"), name);
        if (except.empty() || name != except) ++n;
    }
    return n;
}

/// How many times each thread named `name` (its comm) has gone to sleep, by its id: the
/// kernel's count of its voluntary context switches.
inline std::map<std::string, long> sleeps_of_threads(std::string_view name) {
    std::map<std::string, long> out;
    for (const auto& t : std::filesystem::directory_iterator("/proc/self/task")) {
        std::string comm, line;
        std::getline(std::ifstream(t.path() / "comm"), comm);
        if (comm != name) continue;
        std::ifstream status(t.path() / "status");
        while (std::getline(status, line))
            if (line.starts_with("voluntary_ctxt_switches:"))
                out[t.path().filename().string()] = std::stol(line.substr(line.find(':') + 1));
    }
    return out;
}

}  // namespace deadbolt::test
