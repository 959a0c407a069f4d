// Extend, release and check of memcached holdings: a compare-and-set or compare-and-delete by
// the CAS the grant got; when the CAS moved (a reply lost, a reentrant owner's other client),
// the item is read and its value says whether it is still ours before the write is tried with
// the CAS read. A server out of memory (run with -M, full) cannot store an extended copy: the
// extension then touches the item in place (`mg T`) and checks by its value that it was ours
// (if it was not, ours was gone already, and another holder's TTL was stretched by at most
// one renewal). Every server in one round per step; the answers decided by majority.
#include <fmt/format.h>

#include <charconv>
#include <span>

#include "backends/memcached/holding.hpp"
#include "backends/memcached/store.hpp"
#include "core/quorum.hpp"

namespace deadbolt::detail {

std::string mc_reentrant_value(std::uint64_t fence, std::int64_t holds, std::string_view owner) {
    return fmt::format("{} {} {}", fence, holds, owner);
}

std::optional<McReentrant> mc_parse_reentrant(std::string_view value) {
    McReentrant r;
    auto sp1 = value.find(' ');
    if (sp1 == std::string_view::npos) return std::nullopt;
    auto sp2 = value.find(' ', sp1 + 1);
    if (sp2 == std::string_view::npos || sp2 + 1 >= value.size()) return std::nullopt;
    auto f = value.substr(0, sp1), h = value.substr(sp1 + 1, sp2 - sp1 - 1);
    if (std::from_chars(f.data(), f.data() + f.size(), r.fence).ptr != f.data() + f.size() ||
        std::from_chars(h.data(), h.data() + h.size(), r.holds).ptr != h.data() + h.size() ||
        r.holds < 1)
        return std::nullopt;
    r.owner = std::string(value.substr(sp2 + 1));
    return r;
}

namespace {

enum class Look : unsigned char { direct, read, write, touch, done };

struct Cell {
    const McHolding* h = nullptr;
    std::size_t hi = 0, node = 0, k = 0;
    Look step = Look::read;
    std::uint64_t cas = 0;
    std::string seen;       // the value read
    std::int64_t ttl = -1;  // the TTL read, in seconds
    int writes = 0;         // writes that met a moved CAS
    Verdict::Is is = Verdict::Is::unknown;
    Status why{};
};

bool mine(const McHolding& h, std::string_view seen) {
    if (h.owner.empty()) return seen == h.value;
    auto r = mc_parse_reentrant(seen);
    const auto fence = h.fence();
    return r && r->owner == h.owner && (fence == 0 || r->fence == fence);
}

// A compare-and-set that keeps the item for ttl_s, then a read of its new CAS (the classic
// cas answers without it): appended to out, with the number of replies it brings.
std::size_t cas_write(std::string& out, const std::string& key, std::int64_t ttl_s,
                      std::string_view value, std::uint64_t cas) {
    append_classic_store(out, key, ttl_s, value, cas);
    append_meta(out, "mg", key, "v c");
    return 2;
}

// A compare-and-delete of key by cas, appended to out: one reply.
std::size_t cas_delete(std::string& out, const std::string& key, std::uint64_t cas) {
    append_meta(out, "md", key, 'C', cas);
    return 1;
}

// The request of c's step appended to out (a round's requests go into one text per server):
// the number of replies it brings.
std::size_t text(std::string& out, const Cell& c, McStore::Op op, std::chrono::milliseconds keep) {
    const std::string& key = c.h->keys[c.k];
    auto t = ttl_seconds(keep.count());
    switch (c.step) {
        case Look::direct:
            if (op == McStore::Op::release) return cas_delete(out, key, c.cas);
            return cas_write(out, key, t, c.h->value, c.cas);
        case Look::read:
            append_meta(out, "mg", key, "v c t");
            return 1;
        case Look::touch:
            append_meta(out, "mg", key, fmt::format("T{} v c", t));
            return 1;
        case Look::write:
            if (op == McStore::Op::extend) return cas_write(out, key, t, c.seen, c.cas);
            if (!c.h->owner.empty()) {
                auto r = mc_parse_reentrant(c.seen);
                if (r && r->holds > 1)
                    return cas_write(out, key, std::max<std::int64_t>(c.ttl, 1),
                                     mc_reentrant_value(r->fence, r->holds - 1, r->owner), c.cas);
            }
            return cas_delete(out, key, c.cas);
        case Look::done:
            break;
    }
    return 0;
}

void finish(Cell& c, Verdict::Is is) {
    c.is = is;
    c.step = Look::done;
}

// rs: the replies to what text(c) sent.
void advance(Cell& c, McStore::Op op, std::span<const MetaReply> rs) {
    const MetaReply& r = rs.front();
    const bool oom = r.code == "SERVER_ERROR" && r.value.find("out of memory") != std::string::npos;
    if (r.error() &&
        !(oom && op == McStore::Op::extend && (c.step == Look::direct || c.step == Look::write))) {
        c.why = Status::error(errc::server_error,
                              fmt::format("memcached refused a request: {} {}", r.code, r.value));
        return finish(c, Verdict::Is::unknown);
    }
    switch (c.step) {
        case Look::direct:
        case Look::write:
            if (r.code == "HD") return finish(c, Verdict::Is::yes);  // deleted
            if (r.code == "STORED") {
                // Written; the read after it gives the CAS the next write compares.
                if (rs.size() > 1 && rs[1].code == "VA" && mine(*c.h, rs[1].value))
                    if (auto cas = rs[1].number('c'))
                        c.h->set_cas(c.node, c.k, static_cast<std::uint64_t>(*cas));
                return finish(c, Verdict::Is::yes);
            }
            if (r.code == "NF" || r.code == "NOT_FOUND") return finish(c, Verdict::Is::no);
            if ((r.code == "EX" || r.code == "EXISTS") && ++c.writes <= 3) {
                c.step = Look::read;  // the CAS moved: is it still ours?
                return;
            }
            if (oom) {
                // A full server with -M cannot store the extended copy: touch the item in
                // place instead, and check in the same command that it is still ours.
                c.step = Look::touch;
                return;
            }
            c.why =
                Status::error(errc::server_error,
                              fmt::format("memcached answered {} {} to a write", r.code, r.value));
            return finish(c, Verdict::Is::unknown);
        case Look::touch:
            if (r.code != "VA" || !mine(*c.h, r.value)) return finish(c, Verdict::Is::no);
            if (auto cas = r.number('c'))
                c.h->set_cas(c.node, c.k, static_cast<std::uint64_t>(*cas));
            return finish(c, Verdict::Is::yes);
        case Look::read:
            if (r.code != "VA" || !mine(*c.h, r.value)) return finish(c, Verdict::Is::no);
            if (op == McStore::Op::check) return finish(c, Verdict::Is::yes);
            c.seen = r.value;
            c.cas = static_cast<std::uint64_t>(r.number('c').value_or(0));
            c.ttl = r.number('t').value_or(-1);
            c.step = Look::write;
            return;
        case Look::done:
            return;
    }
}

// A step's working room, kept per thread: a release or a renewal allocates nothing for its
// cells, requests or answers once the thread has made one of the same size.
struct Room {
    std::vector<Cell> cells;
    std::vector<std::size_t> asked, at;
    std::vector<McRequest> reqs;
    std::vector<McAnswer> answers;
    bool busy = false;  // in use further up this thread's stack: another is made
};

// Set as this thread's kept room is destroyed: a thread's thread-locals end before the
// statics do, and a static lock released at exit must not step into freed room (it makes
// its own). Trivially destructible, so it never ends.
thread_local bool room_gone = false;

struct KeptRoom {
    Room room;
    KeptRoom() = default;
    KeptRoom(const KeptRoom&) = delete;
    KeptRoom& operator=(const KeptRoom&) = delete;
    ~KeptRoom() { room_gone = true; }
};

// This thread's kept room while in use here, or else other (the thread is exiting, or the
// kept room is in use further up its stack).
class Lent {
  public:
    explicit Lent(Room& other) : room(pick(other)) { room.busy = true; }
    ~Lent() { room.busy = false; }
    Lent(const Lent&) = delete;
    Lent& operator=(const Lent&) = delete;

    Room& room;

  private:
    static Room& pick(Room& other) {
        thread_local KeptRoom kept;
        return room_gone || kept.room.busy ? other : kept.room;
    }
};

}  // namespace

std::optional<Verdict> McStore::release_at_once(const Holding& held, Clock::time_point by,
                                                bool& tried) {
    // The usual release, of one name on one server by the CAS its grant got, is one
    // compare-and-delete, decided here when its answer is plain (deleted, or gone): the cells
    // and tallies of on_holdings() were a sixth of a memcached cycle. Any other answer (a moved
    // CAS, a refusal) leaves nothing done, and on_holdings() goes on from a read.
    const auto& h = static_cast<const McHolding&>(held);
    const auto cas = nodes_->size() == 1 && h.keys.size() == 1 && h.owner.empty() ? h.cas(0, 0) : 0;
    if (cas == 0) return std::nullopt;
    Room other;
    Lent lent(other);
    auto& reqs = lent.room.reqs;
    auto& answers = lent.room.answers;
    clear_requests(reqs, 1);
    tried = true;
    Cell c;  // the one cell on_holdings() would make, stepped as it would step it
    c.h = &h;
    c.step = Look::direct;
    c.cas = cas;
    reqs[0].replies = text(reqs[0].text, c, Op::release, {});
    reqs[0].errors_are_replies = true;
    nodes_->round(reqs, by, answers);
    const McAnswer& a = answers[0];
    if (!a.status.ok()) return Verdict::unknown(a.status);
    advance(c, Op::release, a.replies);
    if (c.step != Look::done || c.is == Verdict::Is::unknown) return std::nullopt;
    return c.is == Verdict::Is::yes ? Verdict::yes() : Verdict::no();
}

Verdict McStore::release_one(const Holding& h, Clock::time_point by) {
    bool tried = false;
    if (auto v = release_at_once(h, by, tried)) return std::move(*v);
    const Holding* one = &h;
    return std::move(on_holdings(Op::release, {&one, 1}, {}, by, tried).front());
}

std::vector<Verdict> McStore::on_holdings(Op op, std::span<const Holding* const> hs,
                                          std::span<const std::chrono::milliseconds> keeps,
                                          Clock::time_point by, bool cas_tried) {
    const std::size_t n = nodes_->size();
    Room other;
    Lent lent(other);
    Room& room = lent.room;
    auto& cells = room.cells;
    cells.clear();
    for (std::size_t hi = 0; hi < hs.size(); ++hi) {
        const auto* h = static_cast<const McHolding*>(hs[hi]);
        for (std::size_t node = 0; node < n; ++node)
            for (std::size_t k = 0; k < h->keys.size(); ++k) {
                Cell c;
                c.h = h;
                c.hi = hi;
                c.node = node;
                c.k = k;
                c.cas = h->cas(node, k);
                c.step = op != Op::check && c.cas != 0 && h->owner.empty() && !cas_tried
                             ? Look::direct
                             : Look::read;
                cells.push_back(std::move(c));
            }
    }
    // What each cell sent this pass: its replies come in the order of the cells per server.
    auto& asked = room.asked;
    asked.assign(cells.size(), 0);
    auto& at = room.at;
    at.assign(n, 0);
    auto& reqs = room.reqs;
    auto& answers = room.answers;
    for (int pass = 0; pass < 8; ++pass) {
        clear_requests(reqs, n);
        bool any = false;
        for (std::size_t i = 0; i < cells.size(); ++i) {
            auto& c = cells[i];
            asked[i] = 0;
            if (c.step == Look::done) continue;
            auto& req = reqs[c.node];
            asked[i] =
                text(req.text, c, op, keeps.empty() ? std::chrono::milliseconds(0) : keeps[c.hi]);
            req.errors_are_replies = true;
            req.replies += asked[i];
            any = true;
        }
        if (!any) break;
        nodes_->round(reqs, by, answers);
        std::fill(at.begin(), at.end(), 0);
        for (std::size_t i = 0; i < cells.size(); ++i) {
            auto& c = cells[i];
            if (asked[i] == 0) continue;
            if (!answers[c.node].status.ok()) {
                c.why = answers[c.node].status;
                finish(c, Verdict::Is::unknown);
            } else {
                advance(c, op,
                        std::span<const MetaReply>(answers[c.node].replies)
                            .subspan(at[c.node], asked[i]));
            }
            at[c.node] += asked[i];
        }
    }
    std::vector<Verdict> out;
    out.reserve(hs.size());
    for (std::size_t hi = 0; hi < hs.size(); ++hi) {
        int yes = 0, no = 0;
        Status why;
        for (std::size_t node = 0; node < n; ++node) {
            bool all = true, none = false;
            for (const auto& c : cells) {
                if (c.hi != hi || c.node != node) continue;
                all = all && c.is == Verdict::Is::yes;
                none = none || c.is == Verdict::Is::no;
                if (c.is == Verdict::Is::unknown && why.ok())
                    why = c.why.ok() ? Status::error(errc::unknown_outcome,
                                                     "memcached kept changing the item")
                                     : c.why;
            }
            if (all)
                ++yes;
            else if (none)
                ++no;
        }
        switch (tally(yes, no, static_cast<int>(n))) {
            case Tally::yes:
                out.push_back(Verdict::yes());
                break;
            case Tally::no:
                out.push_back(Verdict::no());
                break;
            case Tally::undecided:
                out.push_back(Verdict::unknown(std::move(why)));
                break;
        }
    }
    return out;
}

}  // namespace deadbolt::detail
