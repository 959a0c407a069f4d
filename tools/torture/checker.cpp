#include "checker.hpp"

#include <algorithm>
#include <map>
#include <string>

namespace deadbolt::torture {
namespace {

void example(Verdict& v, std::string text) {
    if (v.examples.size() < 5) v.examples.push_back(std::move(text));
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

Verdict check(std::vector<Event> history, std::int64_t final_register, bool fenced) {
    std::stable_sort(history.begin(), history.end(),
                     [](const Event& a, const Event& b) { return a.t < b.t; });
    Verdict v;
    std::uint64_t max_fence = 0;
    for (const auto& e : history) {
        switch (e.kind) {
            case Event::Kind::acquire_ok:
                ++v.acquisitions;
                v.last_acquisition_ns = std::max(v.last_acquisition_ns, e.t);
                if (fenced && e.fence <= max_fence) {
                    ++v.fence_regressions;
                    example(v, "worker " + std::to_string(e.worker) + " got fence " +
                                   std::to_string(e.fence) + " after " + std::to_string(max_fence));
                }
                max_fence = std::max(max_fence, e.fence);
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
    // A write is stale only if a higher fence was accepted before it was even sent: client
    // clocks cannot order writes that overlapped in flight (a pause may hide between the
    // server's answer and its recording).
    if (fenced) {
        std::vector<const Event*> by_answer, by_send;
        for (const auto& e : history)
            if (e.kind == Event::Kind::write && e.accepted) {
                by_answer.push_back(&e);
                by_send.push_back(&e);
            }
        std::sort(by_send.begin(), by_send.end(),
                  [](const Event* a, const Event* b) { return a->invoked < b->invoked; });
        std::size_t k = 0;
        std::uint64_t max_before = 0;
        for (const Event* w : by_send) {
            while (k < by_answer.size() && by_answer[k]->t < w->invoked)
                max_before = std::max(max_before, by_answer[k++]->fence);
            if (w->fence < max_before) {
                ++v.stale_writes;
                example(v, "worker " + std::to_string(w->worker) + " wrote with fence " +
                               std::to_string(w->fence) + " after fence " +
                               std::to_string(max_before) + " was accepted");
            }
        }
    }
    auto iv = holdings(history);
    std::int64_t held_until = 0;  // the latest end among earlier holdings
    int held_by = -1;
    for (std::size_t i = 0; i < iv.size(); ++i) {
        if (i > 0 && iv[i].begin < held_until) {
            ++v.overlaps;
            example(v, "worker " + std::to_string(iv[i].worker) + " began holding while worker " +
                           std::to_string(held_by) + " still held (" +
                           std::to_string((held_until - iv[i].begin) / 1000) + " µs overlap)");
        }
        if (i > 0) v.max_gap_ns = std::max(v.max_gap_ns, iv[i].begin - iv[i - 1].begin);
        if (iv[i].end > held_until) {
            held_until = iv[i].end;
            held_by = iv[i].worker;
        }
    }
    v.lost_updates = v.accepted_writes - final_register;
    return v;
}

}  // namespace deadbolt::torture
