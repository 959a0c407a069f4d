// The memcached servers a client uses, each with a pool of connections, and rounds: a request
// to each server, all written before any reply is read, so a round takes the slowest server's
// round trip and not their sum.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "backends/memcached/conn.hpp"
#include "backends/memcached/wire.hpp"
#include "core/status.hpp"
#include "core/url_text.hpp"
#include "core/validity.hpp"

namespace deadbolt::detail {

/// What one server answered in a round: its replies, or why there are none.
struct McAnswer {
    Status status{};
    std::vector<MetaReply> replies;
    bool asked = false;  // the round had a request for this server
};

/// A request for one server: the text and how many replies it brings.
struct McRequest {
    std::string text;
    std::size_t replies = 0;
    bool errors_are_replies = false;  // an error line answers its request, not the round
};

/// requests made n empty ones, each text keeping its room.
void clear_requests(std::vector<McRequest>& requests, std::size_t n);

class McNodes {
  public:
    McNodes(std::vector<HostPort> servers, std::chrono::milliseconds connect_timeout);
    std::size_t size() const { return servers_.size(); }
    const HostPort& server(std::size_t i) const { return servers_[i]->at; }

    /// Sends requests[i] to server i (none when its text is empty), then reads every reply,
    /// all by by. A server's failure is its answer's status; a reply that is an error line
    /// turns into server_error (memcached refused the request) there too.
    std::vector<McAnswer> round(const std::vector<McRequest>& requests, Clock::time_point by);
    /// The same into out, one answer per server, reusing its room: a caller that keeps out
    /// between rounds of one shape allocates nothing for the answers.
    void round(const std::vector<McRequest>& requests, Clock::time_point by,
               std::vector<McAnswer>& out);
    /// One request to server i.
    McAnswer one(std::size_t i, const McRequest& request, Clock::time_point by);
    /// `stats <what>` from server i.
    Status stats(std::size_t i, std::string_view what, Clock::time_point by,
                 std::vector<std::pair<std::string, std::string>>& out);

    /// The lines server i answers request with, up to its END.
    Status lines(std::size_t i, std::string_view request, Clock::time_point by,
                 std::vector<std::string>& out);

    /// Called (from the caller's thread) when the server closed a connection: it may have
    /// restarted and forgotten its locks. At most once a second (a check it leads to may meet
    /// another closed connection). Set once, before use.
    std::function<void()> on_break;

  private:
    struct Server {
        HostPort at;
        std::mutex m;
        std::vector<std::unique_ptr<McConn>> idle;
    };
    Status borrow(Server& s, Clock::time_point by, std::unique_ptr<McConn>& out);
    void give_back(Server& s, std::unique_ptr<McConn> c);

    std::vector<std::unique_ptr<Server>> servers_;
    std::chrono::milliseconds connect_timeout_;
    std::atomic<Clock::rep> last_break_{0};
};

}  // namespace deadbolt::detail
