#include "backends/redis/net/subscriber.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "core/backoff.hpp"

namespace deadbolt::detail {

Subscriber::Subscriber(Endpoint ep, std::function<std::vector<Address>()> alternatives)
    : ep_(std::move(ep)),
      transport_(io_),
      rbuf_(std::size_t{16} * 1024),
      alternatives_(std::move(alternatives)) {
    thread_ = std::thread([this] { run(); });
}

Subscriber::~Subscriber() {
    {
        std::lock_guard lk(m_);
        stopping_ = true;
        listener_ = nullptr;  // whoever listened may be gone before us
        cv_.notify_all();
    }
    asio::post(io_, [this] {
        transport_.close();
        io_.stop();
    });
    thread_.join();
}

void Subscriber::run() {
    auto work = asio::make_work_guard(io_);
    unsigned failures = 0;
    for (;;) {
        {
            std::lock_guard lk(m_);
            if (stopping_) return;
            if (target_) {
                ep_.host = std::move(target_->first);
                ep_.port = target_->second;
                target_.reset();
                failures = 0;
            }
        }
        if (io_.stopped()) io_.restart();
        Status st = transport_.open(ep_, Clock::now() + ep_.options.connect_timeout);
        if (!st.ok()) {
            auto all = alternatives_ ? alternatives_() : std::vector<Address>{};
            std::unique_lock lk(m_);
            // The next one after ep_, each in turn (unless a retarget() is pending).
            auto at = std::find(all.begin(), all.end(), Address{ep_.host, ep_.port});
            if (at != all.end()) ++at;
            if (at == all.end()) at = all.begin();
            if (at != all.end() && !target_) std::tie(ep_.host, ep_.port) = *at;
            last_error_ = st;
            notify_locked();
            cv_.wait_for(
                lk,
                jittered_backoff(failures++, ep_.options.reconnect_min, ep_.options.reconnect_max),
                [&] { return stopping_ || target_.has_value(); });
            continue;
        }
        failures = 0;
        reader_.reset();
        {
            std::lock_guard lk(m_);
            if (stopping_) return;
            connected_ = true;
            ++gen_;
            last_error_ = {};
            out_.clear();
            writing_ = false;
            for (auto& [name, ch] : channels_) {
                if (ch.refs <= 0) continue;
                encode_command(out_, {"SUBSCRIBE", name});
                ch.pending_acks = 1;
            }
            start_write_locked();
        }
        start_read();
        if (io_.stopped()) io_.restart();
        io_.run();  // until on_disconnect() or the destructor stops it
    }
}

void Subscriber::start_write_locked() {
    if (writing_ || out_.empty() || !connected_) return;
    writing_buf_.swap(out_);
    out_.clear();
    writing_ = true;
    transport_.async_write(asio::buffer(writing_buf_),
                           [this, g = gen_](const std::error_code& ec, std::size_t) {
                               std::unique_lock lk(m_);
                               if (g != gen_) return;
                               writing_ = false;
                               if (ec) {
                                   if (connected_) {
                                       lk.unlock();
                                       on_disconnect();
                                   }
                                   return;
                               }
                               start_write_locked();
                           });
}

void Subscriber::start_read() {
    transport_.async_read_some(asio::buffer(rbuf_),
                               [this, g = gen_](const std::error_code& ec, std::size_t n) {
                                   if (g != gen_) return;
                                   if (ec) {
                                       if (ec != asio::error::operation_aborted) on_disconnect();
                                       return;
                                   }
                                   try {
                                       reader_.feed(rbuf_.data(), n);
                                       while (auto r = reader_.next()) on_reply(*r);
                                   } catch (const std::exception&) {
                                       on_disconnect();
                                       return;
                                   }
                                   start_read();
                               });
}

void Subscriber::on_reply(const Reply& r) {
    std::lock_guard lk(m_);
    if (r.is_error()) {
        last_error_ = from_server_error(r.str);
        notify_locked();
        return;
    }
    if (r.type != Reply::Type::array || r.elements.size() < 3) return;
    const std::string& kind = r.elements[0].str;
    auto it = channels_.find(r.elements[1].str);
    if (it == channels_.end()) return;
    Channel& ch = it->second;
    if (kind == "message") {
        ++ch.seq;
    } else if (kind == "subscribe" || kind == "unsubscribe") {
        if (ch.pending_acks > 0) --ch.pending_acks;
        ch.subscribed = kind == "subscribe";
        if (ch.refs <= 0 && ch.pending_acks == 0) channels_.erase(it);
    }
    notify_locked();
}

void Subscriber::on_disconnect() {
    std::lock_guard lk(m_);
    connected_ = false;
    // Messages may have been lost while disconnected: wake every waiter to retry.
    for (auto& [name, ch] : channels_) {
        ++ch.seq;
        ch.subscribed = false;
        ch.pending_acks = 0;
    }
    std::erase_if(channels_, [](const auto& kv) { return kv.second.refs <= 0; });
    last_error_ = Status::error(errc::connection_lost,
                                fmt::format("subscriber connection to {} lost", ep_.describe()));
    notify_locked();
    transport_.close();
    io_.stop();
}

void Subscriber::retarget(const std::string& host, std::uint16_t port) {
    unsigned g = 0;
    {
        std::lock_guard lk(m_);
        if (ep_.host == host && ep_.port == port && !target_) return;
        target_.emplace(host, port);
        g = gen_;
        notify_locked();  // a reconnect backoff ends now
    }
    asio::post(io_, [this, g] {
        bool current = false;
        {
            std::lock_guard lk(m_);
            current = connected_ && g == gen_;
        }
        if (current) on_disconnect();  // run() then opens the session at the new address
    });
}

Status Subscriber::subscribe(const std::string& channel, Clock::time_point deadline,
                             std::uint64_t* seq) {
    std::vector<std::uint64_t> seqs;
    Status st = subscribe_all({channel}, deadline, seqs);
    if (st.ok()) *seq = seqs[0];
    return st;
}

Status Subscriber::subscribe_all(const std::vector<std::string>& channels,
                                 Clock::time_point deadline, std::vector<std::uint64_t>& seqs) {
    std::unique_lock lk(m_);
    // Every SUBSCRIBE goes out in one write; the acks are awaited together (one round trip).
    std::vector<Channel*> chs = start_locked(channels);
    bool ok = cv_.wait_until(lk, deadline, [&] {
        if (stopping_) return true;
        if (!connected_) return false;
        for (const Channel* ch : chs)
            if (!ch->subscribed || ch->pending_acks != 0) return false;
        return true;
    });
    if (ok && !stopping_) {
        seqs.clear();
        for (const Channel* ch : chs) seqs.push_back(ch->seq);
        return {};
    }
    Status why = !last_error_.ok()
                     ? last_error_
                     : Status::error(errc::timeout, fmt::format("subscribing to release "
                                                                "notifications on {} timed out",
                                                                ep_.describe()));
    lk.unlock();
    for (const auto& name : channels) unsubscribe(name);
    return why;
}

void Subscriber::unsubscribe(const std::string& channel) {
    std::lock_guard lk(m_);
    auto it = channels_.find(channel);
    if (it == channels_.end()) return;
    if (--it->second.refs > 0) return;
    if (!connected_) {
        channels_.erase(it);
        return;
    }
    encode_command(out_, {"UNSUBSCRIBE", channel});
    ++it->second.pending_acks;
    asio::post(io_, [this] {
        std::lock_guard l(m_);
        start_write_locked();
    });
}

std::uint64_t Subscriber::wait(const std::string& channel, std::uint64_t seq,
                               Clock::time_point deadline) {
    std::vector<std::uint64_t> seqs{seq};
    wait_any({channel}, seqs, deadline);
    return seqs[0];
}

void Subscriber::wait_any(const std::vector<std::string>& channels,
                          std::vector<std::uint64_t>& seqs, Clock::time_point deadline) {
    std::unique_lock lk(m_);
    cv_.wait_until(lk, deadline, [&] {
        bool moved = stopping_;
        for (std::size_t i = 0; i < channels.size(); ++i) {
            auto it = channels_.find(channels[i]);
            // Gone means unsubscribed under us: treat it as an event, never sleep through it.
            std::uint64_t now_seq = it == channels_.end() ? seqs[i] + 1 : it->second.seq;
            moved = moved || now_seq != seqs[i];
            seqs[i] = now_seq;
        }
        return moved;
    });
}

void Subscriber::notify_locked() {
    cv_.notify_all();
    if (listener_) listener_();
}

void Subscriber::listen(std::function<void()> on_change) {
    std::lock_guard lk(m_);
    listener_ = std::move(on_change);
}

void Subscriber::subscribe_start(const std::vector<std::string>& channels) {
    std::lock_guard lk(m_);
    start_locked(channels);
}

std::vector<Subscriber::Channel*> Subscriber::start_locked(
    const std::vector<std::string>& channels) {
    std::vector<Channel*> chs;
    bool queued = false;
    for (const auto& name : channels) {
        Channel& ch = channels_[name];  // std::map: references stay valid as it grows
        chs.push_back(&ch);
        if (++ch.refs == 1 && connected_) {
            encode_command(out_, {"SUBSCRIBE", name});
            ++ch.pending_acks;
            queued = true;
        }
    }
    if (queued)
        asio::post(io_, [this] {
            std::lock_guard l(m_);
            start_write_locked();
        });
    return chs;
}

std::optional<Status> Subscriber::subscribed(const std::vector<std::string>& channels,
                                             std::vector<std::uint64_t>& seqs, Status* failed) {
    std::lock_guard lk(m_);
    if (failed) *failed = last_error_;
    if (stopping_) return Status::error(errc::connection_lost, "the subscriber stopped");
    if (!connected_) return std::nullopt;
    seqs.clear();
    for (const auto& name : channels) {
        auto it = channels_.find(name);
        if (it == channels_.end() || !it->second.subscribed || it->second.pending_acks != 0)
            return std::nullopt;
        seqs.push_back(it->second.seq);
    }
    return Status{};
}

bool Subscriber::moved(const std::vector<std::string>& channels, std::vector<std::uint64_t>& seqs) {
    std::lock_guard lk(m_);
    bool any = stopping_;
    for (std::size_t i = 0; i < channels.size() && i < seqs.size(); ++i) {
        auto it = channels_.find(channels[i]);
        // Gone means unsubscribed under us: treat it as an event, never sleep through it.
        std::uint64_t now_seq = it == channels_.end() ? seqs[i] + 1 : it->second.seq;
        any = any || now_seq != seqs[i];
        seqs[i] = now_seq;
    }
    return any;
}

void Subscriber::poke(const std::string& channel) {
    std::lock_guard lk(m_);
    if (auto it = channels_.find(channel); it != channels_.end()) ++it->second.seq;
    notify_locked();
}

}  // namespace deadbolt::detail
