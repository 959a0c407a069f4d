#include "core/renewer.hpp"

#include <algorithm>

#include "core/background.hpp"
#include "core/backoff.hpp"
#include "core/client_impl.hpp"
#include "core/events.hpp"
#include "core/threads.hpp"
#include "core/validity.hpp"

namespace deadbolt::detail {
namespace {

constexpr std::size_t kChunk = 10000;  // renewals per pipeline: bounds buffer sizes

}  // namespace

std::chrono::milliseconds Renewer::period(const MutexOptions& o) {
    return o.renew_every.count() > 0 ? o.renew_every
                                     : std::max(o.ttl / 3, std::chrono::milliseconds(1));
}

Renewer::Renewer(std::shared_ptr<Store> store, LeaseClock clock)
    : store_(std::move(store)), clock_(std::move(clock)) {}

Renewer::~Renewer() {}

void Renewer::start_locked() {
    // Started on first use: a client that never holds a lease never has this thread.
    if (!thread_.running() && !stopping_)
        thread_ = Background([self = shared_from_this()] { self->run(); }, kThreadName);
}

void Renewer::add(const std::shared_ptr<LeaseState>& lease) {
    std::lock_guard lk(m_);
    start_locked();
    Leases::iterator it = leases_.find(lease.get());
    if (it == leases_.end() && !spare_leases_.empty()) {
        auto node = std::move(spare_leases_.back());
        spare_leases_.pop_back();
        node.key() = lease.get();
        it = leases_.insert(std::move(node)).position;
    } else if (it == leases_.end()) {
        it = leases_.try_emplace(lease.get()).first;
    }
    Entry& e = it->second;
    e.lease = lease;
    e.at = schedule_.end();
    e.hold_until = lease->options.max_hold.count() > 0
                       ? lease->acquired_at + lease->options.max_hold
                       : Clock::time_point::max();
    auto at = lease->options.auto_renew ? lease->acquired_at + period(lease->options)
                                        : lease->valid_until();
    schedule_locked(e, at);
}

void Renewer::remove(const LeaseState* lease) {
    std::lock_guard lk(m_);
    auto it = leases_.find(lease);
    if (it == leases_.end()) return;
    forget_locked(it);
}

void Renewer::add_cleanup(std::shared_ptr<const Holding> h, Clock::time_point give_up,
                          Settled settled) {
    std::lock_guard lk(m_);
    start_locked();
    cleanups_.push_back({std::move(h), give_up, now_on(clock_), 0, std::move(settled)});
    cv_.notify_all();
}

void Renewer::run_cleanups(std::unique_lock<std::mutex>& lk) {
    auto now = now_on(clock_);
    std::vector<Cleanup> due, expired;
    std::erase_if(cleanups_, [&](Cleanup& c) {
        if (c.next_at > now) return false;
        (c.give_up > now ? due : expired).push_back(std::move(c));
        return true;
    });
    if (due.empty() && expired.empty()) return;
    lk.unlock();
    // Outside m_: whoever waits for the answer may take its time.
    for (auto& c : expired)
        if (c.settled) c.settled(Verdict::Is::unknown);
    std::vector<const Holding*> hs;
    hs.reserve(due.size());
    for (auto& c : due) hs.push_back(c.holding.get());
    std::vector<Verdict::Is> answer(due.size(), Verdict::Is::unknown);
    try {
        if (!hs.empty()) {
            auto verdicts = store_->release(hs, store_->deadline());
            for (std::size_t i = 0; i < due.size(); ++i) answer[i] = verdicts[i].is;
        }
    } catch (const std::exception&) {
        // Out of memory: try again later, as after no answer.
    }
    for (std::size_t i = 0; i < due.size(); ++i)  // ours or not: either way done
        if (answer[i] != Verdict::Is::unknown && due[i].settled) due[i].settled(answer[i]);
    lk.lock();
    for (std::size_t i = 0; i < due.size(); ++i) {
        if (answer[i] != Verdict::Is::unknown) continue;
        auto& c = due[i];
        c.next_at = now_on(clock_) + jittered_backoff(c.attempts++, std::chrono::milliseconds(20),
                                                      std::chrono::milliseconds(1000));
        cleanups_.push_back(std::move(c));
    }
}

void Renewer::doubt(Store::Concerns concerns) noexcept {
    try {
        std::lock_guard lk(m_);
        if (leases_.empty() || stopping_) return;  // nothing held: nothing to doubt
        doubts_.push_back(std::move(concerns));
        cv_.notify_all();
    } catch (const std::exception&) {
        // Out of memory: the renewals will find out.
    }
}

// One check for every lease any of which concerns (an empty one concerns all).
void Renewer::verify(const std::vector<Store::Concerns>& which) noexcept {
    try {
        std::vector<std::shared_ptr<LeaseState>> all;
        {
            std::lock_guard lk(m_);
            for (auto& [ptr, e] : leases_) {
                const Holding* h = e.lease->holding.get();
                if (!h) continue;
                bool concerned = false;
                for (const auto& c : which) concerned = concerned || !c || c(*h);
                if (concerned) all.push_back(e.lease);
            }
        }
        std::vector<const Holding*> hs;
        hs.reserve(all.size());
        for (auto& l : all) hs.push_back(l->holding.get());
        if (hs.empty()) return;
        auto verdicts = store_->check(hs, store_->deadline());
        for (std::size_t i = 0; i < all.size(); ++i) {
            // Unknown: the renewals will find out.
            if (verdicts[i].is != Verdict::Is::no || all[i]->released) continue;
            remove(all[i].get());
            all[i]->mark_lost(make_error_code(errc::not_owner));
        }
    } catch (const std::exception&) {
        // Out of memory building the checks: the renewals will find out.
    }
}

void Renewer::stop() {
    Background t;
    {
        std::lock_guard lk(m_);
        stopping_ = true;
        t = std::move(thread_);
    }
    cv_.notify_all();
    t.end();  // the last client handle may die on this thread
    std::vector<Cleanup> left;
    {
        std::lock_guard lk(m_);
        left.swap(cleanups_);
    }
    for (auto& c : left)  // nobody will learn more: whoever waits hears so now
        if (c.settled) c.settled(Verdict::Is::unknown);
}

namespace {
// Spare nodes kept: about the leases a client adds and drops at once.
constexpr std::size_t kSpareNodes = 16;
}  // namespace

void Renewer::schedule_locked(Entry& e, Clock::time_point at) {
    Schedule::node_type node;
    if (e.at != schedule_.end()) {
        node = schedule_.extract(e.at);
    } else if (!spare_places_.empty()) {
        node = std::move(spare_places_.back());
        spare_places_.pop_back();
    }
    if (node.empty()) {
        e.at = schedule_.emplace(at, e.lease.get());
    } else {
        node.key() = at;
        node.mapped() = e.lease.get();
        e.at = schedule_.insert(std::move(node));
    }
    // Wake the thread only if it would sleep past this: a wake-up per acquire would cost a
    // context switch on the hot path.
    if (at < sleeping_until_) cv_.notify_all();
}

void Renewer::unschedule_locked(Entry& e) {
    if (e.at == schedule_.end()) return;
    auto node = schedule_.extract(e.at);
    e.at = schedule_.end();
    if (spare_places_.size() < kSpareNodes) spare_places_.push_back(std::move(node));
}

void Renewer::forget_locked(Leases::iterator it) {
    if (auto at = it->second.at; at != schedule_.end())
        dropped_until_ = std::max(dropped_until_, at->first);
    unschedule_locked(it->second);
    if (spare_leases_.size() >= kSpareNodes) {
        leases_.erase(it);
        return;
    }
    auto node = leases_.extract(it);
    node.mapped().lease.reset();
    spare_leases_.push_back(std::move(node));
}

void Renewer::run() {
    std::unique_lock lk(m_);
    while (!stopping_) {
        if (!doubts_.empty()) {
            auto which = std::move(doubts_);
            doubts_.clear();
            lk.unlock();
            verify(which);
            lk.lock();
            continue;
        }
        run_cleanups(lk);  // drops the lock while it talks to the server
        if (stopping_) break;
        auto now = now_on(clock_);
        auto first = !schedule_.empty()     ? schedule_.begin()->first
                     : dropped_until_ > now ? dropped_until_
                                            : Clock::time_point::max();
        for (auto& c : cleanups_) first = std::min(first, c.next_at);
        if (first > now) {
            sleeping_until_ = first;
            if (first == Clock::time_point::max())
                cv_.wait(lk);
            else
                cv_.wait_for(lk, first - now);  // first is on our clock, the wait on the kernel's
            sleeping_until_ = Clock::time_point::min();
            continue;
        }
        if (schedule_.empty() || schedule_.begin()->first > now) continue;
        // Take everything due within a fifth of the first lease's period: one pipeline.
        std::vector<std::shared_ptr<LeaseState>> renew_batch, expired;
        auto window = now;
        bool window_set = false;
        while (!schedule_.empty()) {
            auto [at, ptr] = *schedule_.begin();
            auto it = leases_.find(ptr);
            if (it == leases_.end()) {  // cannot happen: remove() erases both
                schedule_.erase(schedule_.begin());
                continue;
            }
            Entry& e = it->second;
            if (!window_set) {
                window = now + period(e.lease->options) / 5;
                window_set = true;
            }
            if (at > window) break;
            unschedule_locked(e);
            auto& lease = e.lease;
            if (lease->released || lease->lost) {
                forget_locked(it);
            } else if (now >= lease->valid_until()) {
                expired.push_back(lease);
                forget_locked(it);
            } else if (lease->options.auto_renew && now < e.hold_until) {
                renew_batch.push_back(lease);  // rescheduled by renew()
            } else {
                schedule_locked(e, lease->valid_until());
            }
        }
        lk.unlock();
        for (auto& l : expired) l->mark_lost(make_error_code(errc::timeout));
        expired.clear();
        if (!renew_batch.empty()) renew(renew_batch);
        renew_batch.clear();  // may drop the last reference to a lease: not under m_
        lk.lock();
    }
}

void Renewer::renew(std::vector<std::shared_ptr<LeaseState>>& batch) {
    for (std::size_t begin = 0; begin < batch.size(); begin += kChunk) {
        std::size_t end = std::min(batch.size(), begin + kChunk);
        std::vector<Renewal> rs;
        rs.reserve(end - begin);
        auto by = Clock::time_point::max();  // a slow node costs its vote, not the validity
        auto sent_at = now_on(clock_);
        auto steady = Clock::now();
        for (std::size_t i = begin; i < end; ++i) {
            rs.push_back({batch[i]->holding.get(), batch[i]->px});
            by = std::min(by, store_->deadline_for(batch[i]->options.ttl));
            // Nor does an answer that cannot come before validity ends: by then the lease is
            // lost, and its holder must hear so at that moment, not when the call gives up.
            by = std::min(by, steady + (batch[i]->valid_until() - sent_at));
        }
        auto verdicts = store_->extend(rs, by);
        std::vector<std::shared_ptr<LeaseState>> refused;
        std::vector<std::pair<std::shared_ptr<LeaseState>, Status>> told;  // renewed or failed
        {
            std::lock_guard lk(m_);
            for (std::size_t i = begin; i < end; ++i) {
                auto& l = batch[i];
                auto it = leases_.find(l.get());
                if (it == leases_.end()) continue;  // released meanwhile
                Entry& e = it->second;
                Verdict& v = verdicts[i - begin];
                // A yes after validity ran out may be too late: others may have taken the
                // nodes where ours had expired.
                bool in_time = !store_->late_yes_is_lost() || now_on(clock_) < l->valid_until();
                if (v.is == Verdict::Is::yes && in_time) {
                    l->set_valid_until(validity_deadline(sent_at, l->options.ttl));
                    schedule_locked(e, sent_at + period(l->options));
                    told.emplace_back(l, Status{});
                } else if (v.is == Verdict::Is::no) {
                    refused.push_back(l);
                    forget_locked(it);
                } else {
                    // Transport or server trouble, or a yes too late: try again soon, but never
                    // past validity.
                    auto retry = now_on(clock_) +
                                 std::max(period(l->options) / 10, std::chrono::milliseconds(20));
                    schedule_locked(e, std::min(retry, l->valid_until()));
                    told.emplace_back(l, v.is == Verdict::Is::yes
                                             ? Status::error(errc::timeout,
                                                             "renewed only after the lease's "
                                                             "validity ended")
                                             : std::move(v.status));
                }
            }
        }
        for (auto& l : refused) l->mark_lost(make_error_code(errc::not_owner));
        auto took = micros(now_on(clock_) - sent_at);
        for (auto& [l, why] : told)  // outside m_: an observer may take its time
            tell(l->client->options.observer,
                 LockEvent{.kind = why.ok() ? LockEventKind::renewed : LockEventKind::renew_failed,
                           .name = l->name,
                           .primitive = l->primitive,
                           .took = took,
                           .error = why.ec});
    }
}

}  // namespace deadbolt::detail
