// One TCP connection to a memcached server: requests are written whole, replies read in order
// (pipelined), each bounded by a deadline. A blocking socket (core/read_bound.hpp): a meta
// command is one short line each way, so a round trip is a send and a read, as a plain
// client's; the engine's rounds send to every server before reading any reply.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "backends/memcached/wire.hpp"
#include "core/read_bound.hpp"
#include "core/status.hpp"
#include "core/url_text.hpp"
#include "core/validity.hpp"

namespace deadbolt::detail {

class McConn {
  public:
    /// A connection to server by by; connect_failed saying where and why when none.
    static Status open(const HostPort& server, Clock::time_point by, std::unique_ptr<McConn>& out);
    ~McConn();
    McConn(const McConn&) = delete;
    McConn& operator=(const McConn&) = delete;

    /// Writes bytes by by: connection_lost when none went out (nothing was done),
    /// unknown_outcome when part did (what it does is unknown); either closes it.
    Status send(std::string_view bytes, Clock::time_point by);
    /// Reads n replies by by, and past by what has come (unknown_outcome when they did not
    /// all come: the requests were sent; protocol_error when the server speaks something
    /// else). A failure closes it.
    Status receive(std::size_t n, Clock::time_point by, std::vector<MetaReply>& out);
    /// `stats <what>` as name/value pairs (what empty: the general stats).
    Status stats(std::string_view what, Clock::time_point by,
                 std::vector<std::pair<std::string, std::string>>& out);
    /// The lines a command answers with up to its "END" (lru_crawler metadump), without it.
    Status lines(std::string_view request, Clock::time_point by, std::vector<std::string>& out);
    /// A failure closed it: it is not to be used again.
    bool broken() const { return fd_ < 0; }
    /// The server closed it (a restart, an operator, a cut link), rather than a deadline.
    bool hung_up() const { return hung_up_; }
    const std::string& where() const { return where_; }

  private:
    McConn(int fd, std::string where) : fd_(fd), where_(std::move(where)) {}
    // Reads what is there, waiting until by (past it, what has come): false (and closed) when
    // nothing came by then, or on an error.
    bool read_some(Clock::time_point by, std::string& into, Status& why);
    void close() noexcept;

    int fd_ = -1;
    bool hung_up_ = false;
    ReadBound bound_;  // the receive timeout, a read's bound
    std::string where_;
    MetaParser parser_;
    std::string got_;  // what the last read brought, kept so that a read does not allocate
};

}  // namespace deadbolt::detail
