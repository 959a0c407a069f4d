#include "backends/redis/net/subscriber.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "core/backoff.hpp"

namespace deadbolt::detail {
namespace {

// Mailboxes are local names: no channel deadbolt subscribes to starts with this byte.
constexpr char kMailbox = '\x01';
constexpr std::string_view kKeyspace = "__keyspace@";

// What a keyspace event says of a watched key: gone (deleted, expired, evicted, renamed or
// moved away), or changed in some other way that a holder does not lose it by (its own
// renewals' "expire", a reentrant count, another reader).
bool gone(std::string_view event) {
    return event == "del" || event == "expired" || event == "evicted" || event == "rename_from" ||
           event == "move_from";
}

// notify-keyspace-events as CONFIG GET shows it: keyspace events (K) of a class that reports
// a deletion, expiry or eviction (g, x, e, or A for all of them).
bool keyspace_on(std::string_view flags) {
    return flags.find('K') != std::string_view::npos &&
           flags.find_first_of("gxeA") != std::string_view::npos;
}

}  // namespace

std::string Subscriber::mailbox(std::string_view box) {
    std::string out(1, kMailbox);
    out.append(box);
    return out;
}

bool Subscriber::is_mailbox(std::string_view name) {
    return !name.empty() && name.front() == kMailbox;
}

Subscriber::Subscriber(Endpoint ep, std::function<std::vector<Address>()> alternatives, Hooks hooks)
    : ep_(std::move(ep)),
      hooks_(std::move(hooks)),
      transport_(io_),
      rbuf_(std::size_t{16} * 1024),
      alternatives_(std::move(alternatives)) {
    // The client's own channels stay for the subscriber's life: the first session subscribes
    // them together with whatever a waiter asked for meanwhile.
    for (const std::string* standing : {&hooks_.inbox, &hooks_.notices})
        if (!standing->empty()) ++channels_[*standing].refs;
    if (!hooks_.keyspace) keyspace_ = Keyspace::off;
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
        Tell tell;
        {
            std::lock_guard lk(m_);
            if (stopping_) return;
            connected_ = true;
            ++gen_;
            last_error_ = {};
            out_.clear();
            sent_.clear();
            writing_ = false;
            tell.reconnected = sessions_++ > 0;
            // Before any SUBSCRIBE: a subscribed connection takes no other command. Each
            // session reads it again, since a restarted server may have another setting.
            if (hooks_.keyspace && !config_refused_) {
                keyspace_ = Keyspace::unknown;
                encode_command(out_, {"CONFIG", "GET", "notify-keyspace-events"});
                sent_.push_back({Sent::What::config, {}});
            }
            std::vector<std::string> names;
            for (auto& [name, ch] : channels_) {
                ch.pending_acks = 0;
                if (ch.kind == Kind::mailbox || ch.refs <= 0) continue;
                ch.subscribed = false;
                if (ch.kind == Kind::keyspace) continue;  // once the setting says they come
                names.push_back(name);
            }
            if (!names.empty()) subscribe_locked(std::move(names));
            start_write_locked();
        }
        told(tell);
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

void Subscriber::post_write_locked() {
    asio::post(io_, [this] {
        std::lock_guard l(m_);
        start_write_locked();
    });
}

// One SUBSCRIBE for every name: commandstats counts a command, not a channel.
void Subscriber::subscribe_locked(std::vector<std::string> names) {
    std::vector<std::string_view> argv{"SUBSCRIBE"};
    for (const auto& name : names) {
        argv.push_back(name);
        ++channels_[name].pending_acks;
    }
    encode_command(out_, argv);
    sent_.push_back({Sent::What::subscribe, std::move(names)});
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
    Tell tell;
    {
        std::lock_guard lk(m_);
        on_reply_locked(r, tell);
        notify_locked();
    }
    told(tell);
}

void Subscriber::told(Tell& tell) {
    if (tell.reconnected && hooks_.reconnected) hooks_.reconnected();
    if (hooks_.freed)
        for (const auto& name : tell.freed) hooks_.freed(name);
    if (hooks_.key_gone)
        for (const auto& key : tell.gone) hooks_.key_gone(key);
}

void Subscriber::on_reply_locked(const Reply& r, Tell& tell) {
    if (r.is_error()) return on_error_locked(r);
    if (!sent_.empty() && sent_.front().what == Sent::What::config) {
        sent_.pop_front();
        return on_config_locked(r);
    }
    if (r.type != Reply::Type::array || r.elements.size() < 3) return;
    const std::string& kind = r.elements[0].str;
    const std::string& name = r.elements[1].str;
    if (kind == "message") return on_message_locked(name, r.elements[2].str, tell);
    if (kind != "subscribe" && kind != "unsubscribe") return;
    if (!sent_.empty()) {
        auto& waiting = sent_.front().channels;
        if (auto at = std::find(waiting.begin(), waiting.end(), name); at != waiting.end())
            waiting.erase(at);
        if (waiting.empty()) sent_.pop_front();
    }
    auto it = channels_.find(name);
    if (it == channels_.end()) return;
    Channel& ch = it->second;
    if (ch.pending_acks > 0) --ch.pending_acks;
    ch.subscribed = kind == "subscribe";
    // Listening again after a lost session: a waiter that looked meanwhile lined up while
    // nobody listened here, and a release may have dropped it for that. Each looks again now.
    if (ch.subscribed && sessions_ > 1 && !hooks_.inbox.empty() && name == hooks_.inbox)
        for (auto& entry : channels_)
            if (entry.second.kind == Kind::mailbox) ++entry.second.seq;
    if (ch.refs <= 0 && ch.pending_acks == 0) channels_.erase(it);
}

void Subscriber::on_error_locked(const Reply& r) {
    if (sent_.empty()) {  // not an answer to anything we sent: the session is in trouble
        last_error_ = from_server_error(r.str);
        return;
    }
    Sent failed = std::move(sent_.front());
    sent_.pop_front();
    if (failed.what == Sent::What::config) {
        // No right to read it (an ACL): no keyspace events for this client, and no more asking.
        config_refused_ = true;
        keyspace_ = Keyspace::off;
        return;
    }
    for (const auto& name : failed.channels) {
        auto it = channels_.find(name);
        if (it == channels_.end()) continue;
        Channel& ch = it->second;
        if (ch.pending_acks > 0) --ch.pending_acks;
        // A keyspace channel the ACL refuses: holders learn of deletions at renewal, as
        // without keyspace events; a waiter's channel refused is the waiter's error.
        if (ch.kind == Kind::keyspace && failed.what == Sent::What::subscribe)
            keyspace_ = Keyspace::off;
        else if (failed.what == Sent::What::subscribe)
            last_error_ = from_server_error(r.str);
        if (ch.refs <= 0 && ch.pending_acks == 0) channels_.erase(it);
    }
}

void Subscriber::on_config_locked(const Reply& r) {
    bool on =
        r.type == Reply::Type::array && r.elements.size() == 2 && keyspace_on(r.elements[1].str);
    keyspace_ = on ? Keyspace::on : Keyspace::off;
    if (!on) return;
    std::vector<std::string> names;
    for (auto& [name, ch] : channels_)
        if (ch.kind == Kind::keyspace && ch.refs > 0) names.push_back(name);
    if (names.empty()) return;
    subscribe_locked(std::move(names));
    start_write_locked();
}

void Subscriber::on_message_locked(const std::string& channel, const std::string& payload,
                                   Tell& tell) {
    if (!hooks_.inbox.empty() && channel == hooks_.inbox) return on_inbox_locked(payload);
    if (!hooks_.notices.empty() && channel == hooks_.notices) {
        tell.freed.push_back(payload);
        return;
    }
    auto it = channels_.find(channel);
    if (it == channels_.end()) return;
    if (it->second.kind == Kind::keyspace) {
        auto prefix = keyspace_channel("");
        if (gone(payload) && channel.starts_with(prefix))
            tell.gone.push_back(channel.substr(prefix.size()));
        return;
    }
    ++it->second.seq;
}

// "go <box>": the lock may be free for this client's waiter of box; "next <box>": it stands by
// in case the waiter woken ahead never comes; "taken <box>": that one came.
void Subscriber::on_inbox_locked(std::string_view payload) {
    auto space = payload.find(' ');
    if (space == std::string_view::npos) return;
    std::string_view word = payload.substr(0, space);
    std::string name = mailbox(payload.substr(space + 1));
    auto it = channels_.find(name);
    if (word == "go") {
        cancel_standby(name);
        if (it != channels_.end()) ++it->second.seq;
    } else if (word == "next") {
        if (it != channels_.end() && it->second.standby.count() > 0)
            arm_standby(name, it->second.standby);
    } else if (word == "taken") {
        cancel_standby(name);
    }
}

// On the subscriber's thread (a reply's handler), under m_; the timer's handler takes m_.
void Subscriber::arm_standby(const std::string& mailbox, std::chrono::milliseconds after) {
    auto& timer = standby_[mailbox];
    if (!timer) timer = std::make_unique<asio::steady_timer>(io_);
    timer->expires_after(after);  // a pending one is cancelled: the latest "next" counts
    timer->async_wait([this, mailbox](const std::error_code& ec) {
        if (ec) return;
        std::lock_guard lk(m_);
        standby_.erase(mailbox);
        if (auto it = channels_.find(mailbox); it != channels_.end()) {
            ++it->second.seq;
            notify_locked();
        }
    });
}

void Subscriber::cancel_standby(const std::string& mailbox) {
    standby_.erase(mailbox);  // destroying it cancels the wait, whose handler then returns
}

std::string Subscriber::keyspace_channel(std::string_view key) const {
    return fmt::format("{}{}__:{}", kKeyspace, ep_.redis.db, key);
}

void Subscriber::on_disconnect() {
    std::lock_guard lk(m_);
    connected_ = false;
    sent_.clear();
    // Messages may have been lost while disconnected: wake every waiter to retry.
    for (auto& [name, ch] : channels_) {
        ++ch.seq;
        if (ch.kind == Kind::mailbox) continue;
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
    Channel& ch = it->second;
    if (--ch.refs > 0) return;
    // Never sent (a mailbox, a keyspace channel while events are off, or no session): nothing
    // to take back from the server.
    if (!connected_ || ch.kind == Kind::mailbox || (!ch.subscribed && ch.pending_acks == 0)) {
        channels_.erase(it);
        return;
    }
    encode_command(out_, {"UNSUBSCRIBE", channel});
    sent_.push_back({Sent::What::unsubscribe, {channel}});
    ++ch.pending_acks;
    post_write_locked();
}

bool Subscriber::watch_key(std::string_view key) {
    if (keyspace_ == Keyspace::off) return false;
    std::lock_guard lk(m_);
    std::string name = keyspace_channel(key);
    Channel& ch = channels_[name];
    ch.kind = Kind::keyspace;
    // 0 -> 1 while connected: new, or its UNSUBSCRIBE is on the way (the SUBSCRIBE follows).
    if (++ch.refs == 1 && connected_ && keyspace_ == Keyspace::on) {
        subscribe_locked({name});
        post_write_locked();
    }
    return true;
}

void Subscriber::unwatch_key(const std::string& key) {
    unsubscribe(keyspace_channel(key));
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

void Subscriber::standby(const std::string& mailbox, std::chrono::milliseconds after) {
    std::lock_guard lk(m_);
    if (auto it = channels_.find(mailbox); it != channels_.end()) it->second.standby = after;
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

Subscriber::Channel& Subscriber::entry_locked(const std::string& name) {
    auto [it, fresh] = channels_.try_emplace(name);
    if (fresh && is_mailbox(name)) {
        it->second.kind = Kind::mailbox;
        it->second.subscribed = true;  // nothing to ask the server
    }
    return it->second;
}

std::vector<Subscriber::Channel*> Subscriber::start_locked(
    const std::vector<std::string>& channels) {
    std::vector<Channel*> chs;
    std::vector<std::string> names;
    for (const auto& name : channels) {
        Channel& ch = entry_locked(name);  // std::map: references stay valid as it grows
        chs.push_back(&ch);
        if (++ch.refs == 1 && connected_ && ch.kind == Kind::server) names.push_back(name);
    }
    if (!names.empty()) {
        subscribe_locked(std::move(names));
        post_write_locked();
    }
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
