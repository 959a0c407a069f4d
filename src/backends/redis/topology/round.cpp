#include "backends/redis/topology/round.hpp"

#include <fmt/format.h>

namespace deadbolt::detail {
namespace {

struct Round {
    std::vector<NodeReplies> results;
    std::vector<std::shared_ptr<AsyncConnection>> conns;
    std::size_t left = 0;
    Decided decided;
    RoundDone done;
    bool over = false;

    void answer(std::size_t i, Status st, std::vector<Reply> r) {
        if (over) return;
        results[i] = {std::move(st), std::move(r), true};
        --left;
        if (left > 0 && !(decided && decided(results))) return;
        over = true;
        for (std::size_t k = 0; k < results.size(); ++k)
            if (!results[k].arrived)
                results[k].status = Status::error(
                    errc::unknown_outcome, fmt::format("the round was decided before {} answered",
                                                       conns[k]->endpoint().describe()));
        auto d = std::move(done);
        d(std::move(results));
    }
};

}  // namespace

void start_round(std::span<const std::shared_ptr<AsyncConnection>> conns, const Send& send,
                 Decided decided, RoundDone done) {
    auto round = std::make_shared<Round>();
    round->results.resize(conns.size());
    round->left = conns.size();
    round->decided = std::move(decided);
    round->done = std::move(done);
    if (conns.empty()) return round->done({});
    round->conns.assign(conns.begin(), conns.end());
    for (std::size_t i = 0; i < conns.size(); ++i)
        send(*conns[i], [round, i](Status st, std::vector<Reply> r) {
            round->answer(i, std::move(st), std::move(r));
        });
}

}  // namespace deadbolt::detail
