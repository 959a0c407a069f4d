// How many threads this process runs now (from /proc), for tests of when deadbolt starts its
// background threads.
#pragma once

#include <filesystem>
#include <fstream>
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

}  // namespace deadbolt::test
