#include "checker.hpp"

#include <algorithm>
#include <map>
#include <queue>
#include <string>

namespace deadbolt::torture {
namespace {

void example(Verdict& v, std::string text) {
    if (v.examples.size() < 5) v.examples.push_back(std::move(text));
}

// Client clocks order two operations only when one answered before the other was sent; then
// the later one must carry a higher fence (strict), or at least not a lower one. Operations in
// flight together may reach the server in either order (a pause may hide between the server's
// answer and its recording), so they are not compared.
template <class OnViolation>
void check_real_time_order(std::vector<const Event*> ops, bool strict, OnViolation bad) {
    auto by_answer = ops;
    std::sort(ops.begin(), ops.end(),
              [](const Event* a, const Event* b) { return a->invoked < b->invoked; });
    std::sort(by_answer.begin(), by_answer.end(),
              [](const Event* a, const Event* b) { return a->t < b->t; });
    std::size_t k = 0;
    std::uint64_t max_before = 0;
    for (const Event* op : ops) {
        while (k < by_answer.size() && by_answer[k]->t < op->invoked)
            max_before = std::max(max_before, by_answer[k++]->fence);
        if (strict ? op->fence <= max_before : op->fence < max_before) bad(*op, max_before);
    }
}

}  // namespace

std::vector<Interval> holdings(const std::vector<Event>& history) {
    std::vector<Event> h = history;
    std::stable_sort(h.begin(), h.end(), [](const Event& a, const Event& b) { return a.t < b.t; });
    std::map<int, Interval> open;
    std::vector<Interval> out;
    for (const auto& e : h) {
        if (e.kind == Event::Kind::acquire_ok) {
            // A worker killed while holding is replaced under the same id: its holding never
            // ended by release, so it runs until its validity.
            if (auto it = open.find(e.worker); it != open.end()) out.push_back(it->second);
            open[e.worker] = {e.worker, e.t, e.valid_until, e.fence};
        } else if (e.kind == Event::Kind::release) {
            auto it = open.find(e.worker);
            if (it == open.end()) continue;
            // Renewals moved the deadline since acquire: the release carries the last one.
            if (e.valid_until != kForever) it->second.end = e.valid_until;
            it->second.end = std::min(it->second.end, e.t);
            out.push_back(it->second);
            open.erase(it);
        }
    }
    // Never released (killed, or the run ended): held until validity ran out.
    for (auto& [w, iv] : open) out.push_back(iv);
    std::sort(out.begin(), out.end(),
              [](const Interval& a, const Interval& b) { return a.begin < b.begin; });
    return out;
}

Verdict check(std::vector<Event> history, std::int64_t final_register, bool fenced, int capacity) {
    std::stable_sort(history.begin(), history.end(),
                     [](const Event& a, const Event& b) { return a.t < b.t; });
    Verdict v;
    for (const auto& e : history) {
        switch (e.kind) {
            case Event::Kind::acquire_ok:
                ++v.acquisitions;
                v.last_acquisition_ns = std::max(v.last_acquisition_ns, e.t);
                // Recorded only after its validity ended (a pause between the reply and the
                // record, or a late reply): not a holding. Its fence still orders grants.
                if (e.valid_until <= e.t) ++v.late_grants;
                break;
            case Event::Kind::acquire_fail:
                ++v.failed;
                break;
            case Event::Kind::acquire_unknown:
                ++v.unknown;
                break;
            case Event::Kind::write:
                if (e.accepted) ++v.accepted_writes;
                break;
            default:
                break;
        }
    }
    if (fenced) {
        std::vector<const Event*> grants, writes;
        for (const auto& e : history) {
            if (e.kind == Event::Kind::acquire_ok) grants.push_back(&e);
            if (e.kind == Event::Kind::write && e.accepted) writes.push_back(&e);
        }
        check_real_time_order(grants, true, [&](const Event& e, std::uint64_t before) {
            ++v.fence_regressions;
            example(v, "worker " + std::to_string(e.worker) + " got fence " +
                           std::to_string(e.fence) + " after " + std::to_string(before));
        });
        check_real_time_order(writes, false, [&](const Event& e, std::uint64_t before) {
            ++v.stale_writes;
            example(v, "worker " + std::to_string(e.worker) + " wrote with fence " +
                           std::to_string(e.fence) + " after fence " + std::to_string(before) +
                           " was accepted");
        });
    }
    auto iv = holdings(history);
    // Earlier holdings still valid, soonest end on top: a holding that begins while `capacity`
    // of them remain is one holder too many.
    using End = std::pair<std::int64_t, int>;  // end, worker
    std::priority_queue<End, std::vector<End>, std::greater<>> valid;
    for (std::size_t i = 0; i < iv.size(); ++i) {
        while (!valid.empty() && valid.top().first <= iv[i].begin) valid.pop();
        if (i > 0) v.max_gap_ns = std::max(v.max_gap_ns, iv[i].begin - iv[i - 1].begin);
        if (iv[i].end <= iv[i].begin) continue;  // a late grant: never a holding
        if (static_cast<int>(valid.size()) >= capacity) {
            ++v.overlaps;
            std::string others = "worker " + std::to_string(valid.top().second);
            if (capacity > 1)
                others.insert(0, std::to_string(valid.size()) + " holders, ").append(",");
            example(v, "worker " + std::to_string(iv[i].worker) + " began holding while " + others +
                           " still held (" +
                           std::to_string((valid.top().first - iv[i].begin) / 1000) +
                           " µs overlap)");
        }
        valid.push({iv[i].end, iv[i].worker});
        v.peak_holders = std::max(v.peak_holders, static_cast<std::int64_t>(valid.size()));
    }
    v.lost_updates = v.accepted_writes - final_register;
    return v;
}

}  // namespace deadbolt::torture
