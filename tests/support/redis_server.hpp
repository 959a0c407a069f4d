// RedisServer: a real redis-server on a free port in a temp dir, killed at teardown.
// Raw: a plain hiredis connection for the tests' own inspection of the server.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

struct redisContext;

namespace deadbolt::test {

/// A parsed reply from Raw::cmd, flattened for assertions.
struct RawReply {
    enum Type { nil, integer_t, string_t, status_t, error_t, array_t } type = nil;
    long long integer = 0;
    std::string str;
    std::vector<RawReply> elements;
};

class Raw {
  public:
    Raw(const std::string& host, std::uint16_t port, const std::string& password = "");
    ~Raw();
    RawReply cmd(const std::vector<std::string>& argv);
    /// calls of `name` in INFO commandstats (e.g. "evalsha").
    long long calls(const std::string& name);
    /// Commands deadbolt clients send (commandstats also counts commands run inside
    /// scripts, so only these): evalsha, eval, subscribe, unsubscribe, ping.
    long long client_commands();
    /// A numeric field of INFO (e.g. "total_reads_processed").
    long long stat(const std::string& field);

  private:
    redisContext* c_ = nullptr;
};

class RedisServer {
  public:
    /// env: extra NAME=value entries for the server process (e.g. an LD_PRELOAD).
    explicit RedisServer(std::vector<std::string> extra_args = {},
                         std::vector<std::string> env = {});
    /// A Redis Sentinel whose config file (written into its dir, where it may rewrite it)
    /// starts with sentinel_conf.
    static std::unique_ptr<RedisServer> sentinel(const std::string& sentinel_conf);
    ~RedisServer();
    RedisServer(const RedisServer&) = delete;
    RedisServer& operator=(const RedisServer&) = delete;

    void start();
    /// Sends sig (SIGKILL by default) and reaps the process.
    void stop(int sig = 9);
    void restart() {
        stop();
        start();
    }
    /// SIGSTOP / SIGCONT the server process.
    void pause();
    void resume();

    std::uint16_t port() const { return port_; }
    const std::string& dir() const { return dir_; }
    std::string url() const { return "redis://127.0.0.1:" + std::to_string(port_); }
    Raw raw(const std::string& password = "") const { return Raw("127.0.0.1", port_, password); }
    /// Client connections the server has now (CLIENT LIST), this inspection's own included.
    int connections() const;

  private:
    struct SentinelTag {};
    RedisServer(SentinelTag, const std::string& sentinel_conf);
    void make_dir();
    std::vector<std::string> extra_, env_;
    std::string conf_;  // a config file given first (sentinel mode)
    std::string dir_;
    std::uint16_t port_ = 0;
    pid_t pid_ = -1;
};

/// A TCP port free on 127.0.0.1 right now.
std::uint16_t free_port();

/// Directory of the test binaries (for helper executables).
std::string self_dir();

/// Starts argv (found on PATH) with stdout and stderr appended to log: its pid.
pid_t spawn_logged(std::vector<std::string> argv, const std::string& log);

/// Runs argv, waits, returns its exit status (WEXITSTATUS) or 128+signal; output to *out.
int run_command(const std::vector<std::string>& argv, std::string* out = nullptr,
                const std::vector<std::string>& extra_env = {});

}  // namespace deadbolt::test
