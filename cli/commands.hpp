// The deadbolt subcommands: their arguments, registration and entry points.
#pragma once

#include <CLI/CLI.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace deadbolt::cli {

struct RunArgs {
    std::string url, name, ttl = "30s", wait, lock_delay = "0s", max_hold = "0s",
                           kill_grace = "10s";
    bool no_wait = false, shared = false, write = false, fair = false;
    int permits = 0;         // > 0: take a slot of a semaphore of this many permits
    bool elect = false;      // campaign in the election NAME instead of locking it
    std::string value;       // what the leader proclaims
    bool observe = false;    // elect: print the leader and every change instead of campaigning
    std::string shell;       // run -c: the command as one shell string
    int conflict_exit = 75;  // exit code when the lock is not obtained (flock -E)
    std::vector<std::string> command;
};
void add_run_command(CLI::App& app, RunArgs& a);
void add_elect_command(CLI::App& app, RunArgs& a);
int run_command(const RunArgs& a);

struct StatusArgs {
    std::string url, name;
    bool json = false;
    bool quiet = false;
};
void add_status_command(CLI::App& app, StatusArgs& a);
int status_command(const StatusArgs& a);
void add_force_unlock_command(CLI::App& app, StatusArgs& a);
int force_unlock_command(const StatusArgs& a);

struct ListArgs {
    std::string url, pattern = "*";
    bool json = false;
    bool all = false;  // also plain strings and numbers deadbolt did not write
};
void add_list_command(CLI::App& app, ListArgs& a);
int list_command(const ListArgs& a);

struct ExporterArgs {
    std::string url, listen = "127.0.0.1:9465", pattern = "*", min_interval = "1s";
    std::vector<std::string> names;  // globs that map lock names to a bounded `name` label
    bool all = false;                // also plain strings and numbers deadbolt did not write
};
void add_exporter_command(CLI::App& app, ExporterArgs& a);
int exporter_command(const ExporterArgs& a);

struct TopArgs {
    std::string url, pattern = "*", interval = "1s", sort = "name";
    long iterations = 0;  // 0: until q or a signal
    bool all = false;     // also plain strings and numbers deadbolt did not write
};
void add_top_command(CLI::App& app, TopArgs& a);
int top_command(const TopArgs& a);

struct ThrottleArgs {
    std::string url, key, window;
    std::int64_t burst = 1;
};
void add_throttle_command(CLI::App& app, ThrottleArgs& a);
int throttle_command(const ThrottleArgs& a);

struct FencedSetArgs {
    std::string url, key, value, fence, if_version;
};
void add_fenced_set_command(CLI::App& app, FencedSetArgs& a);
int fenced_set_command(const FencedSetArgs& a);

struct FencedGetArgs {
    std::string url, key;
    bool json = false;
};
void add_fenced_get_command(CLI::App& app, FencedGetArgs& a);
int fenced_get_command(const FencedGetArgs& a);

struct InitArgs {
    std::string url;
};
void add_init_command(CLI::App& app, InitArgs& a);
int init_command(const InitArgs& a);

struct AclArgs {
    std::string user = "deadbolt", prefix;
};
void add_acl_command(CLI::App& app, AclArgs& a);
int acl_command(const AclArgs& a);

}  // namespace deadbolt::cli
