// The built deadbolt CLI run as a user runs it; DEADBOLT_CLI (its path) is set by the test
// target that includes this.
#pragma once

#include <string>
#include <vector>

#include "redis_server.hpp"  // run_command

namespace deadbolt::test {

/// What one run of the CLI gave: its exit code, and stdout and stderr together.
struct CliResult {
    int rc = -1;
    std::string out;
};

/// Runs `deadbolt args...` with DEADBOLT_URL=url and env (NAME=value entries) added.
inline CliResult run_cli(const std::string& url, std::vector<std::string> args,
                         std::vector<std::string> env = {}) {
    args.insert(args.begin(), DEADBOLT_CLI);
    env.push_back("DEADBOLT_URL=" + url);
    CliResult r;
    r.rc = run_command(args, &r.out, env);
    return r;
}

}  // namespace deadbolt::test
