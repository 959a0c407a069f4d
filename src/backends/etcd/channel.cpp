#include "backends/etcd/channel.hpp"

#include <arpa/inet.h>
#include <fmt/format.h>
#include <netdb.h>

#include <fstream>
#include <sstream>

namespace deadbolt::detail {
namespace {

bool read_file(const std::string& path, std::string& out) {
    std::ifstream in(path, std::ios::binary);
    if (!in) return false;
    std::stringstream s;
    s << in.rdbuf();
    out = s.str();
    return true;
}

// The gRPC target for members: "ipv4:a:p,b:p" (or ipv6:), resolved now so that one channel
// knows every member and fails over between them. Empty and why on a name that does not
// resolve.
std::string target_of(const std::vector<EtcdMember>& members, std::string& why) {
    std::vector<std::string> v4, v6;
    for (const auto& m : members) {
        addrinfo hints{};
        hints.ai_socktype = SOCK_STREAM;
        addrinfo* res = nullptr;
        if (int rc = ::getaddrinfo(m.host.c_str(), nullptr, &hints, &res); rc != 0) {
            why = fmt::format("etcd member '{}' does not resolve: {}", m.describe(),
                              ::gai_strerror(rc));
            return {};
        }
        std::string a4, a6;
        for (auto* p = res; p; p = p->ai_next) {
            char text[INET6_ADDRSTRLEN] = {};
            if (p->ai_family == AF_INET && a4.empty()) {
                ::inet_ntop(AF_INET, &reinterpret_cast<sockaddr_in*>(p->ai_addr)->sin_addr, text,
                            sizeof text);
                a4 = text;
            } else if (p->ai_family == AF_INET6 && a6.empty()) {
                ::inet_ntop(AF_INET6, &reinterpret_cast<sockaddr_in6*>(p->ai_addr)->sin6_addr, text,
                            sizeof text);
                a6 = text;
            }
        }
        ::freeaddrinfo(res);
        if (!a4.empty()) {
            v4.push_back(fmt::format("{}:{}", a4, m.port));
            v6.push_back(fmt::format("[::ffff:{}]:{}", a4, m.port));
        } else {
            v6.push_back(fmt::format("[{}]:{}", a6, m.port));
        }
    }
    auto join = [](const std::vector<std::string>& v) {
        std::string out;
        for (const auto& s : v) out += (out.empty() ? "" : ",") + s;
        return out;
    };
    return v4.size() == members.size() ? "ipv4:" + join(v4) : "ipv6:" + join(v6);
}

std::shared_ptr<grpc::ChannelCredentials> credentials(const ClientOptions& o, std::string& why) {
    if (!o.tls.enabled) return grpc::InsecureChannelCredentials();
    grpc::SslCredentialsOptions ssl;
    if (!o.tls.ca_file.empty() && !read_file(o.tls.ca_file, ssl.pem_root_certs))
        why = fmt::format("cannot read the CA file '{}'", o.tls.ca_file);
    if (!o.tls.cert_file.empty() && (!read_file(o.tls.cert_file, ssl.pem_cert_chain) ||
                                     !read_file(o.tls.key_file, ssl.pem_private_key)))
        why = fmt::format("cannot read the client certificate '{}' or its key '{}'",
                          o.tls.cert_file, o.tls.key_file);
    return grpc::SslCredentials(ssl);
}

bool says(const grpc::Status& s, std::string_view what) {
    return s.error_message().find(what) != std::string::npos;
}

}  // namespace

std::chrono::system_clock::time_point grpc_deadline(Clock::time_point by) {
    auto left = by - Clock::now();
    return std::chrono::system_clock::now() +
           std::chrono::duration_cast<std::chrono::system_clock::duration>(left);
}

EtcdChannel::EtcdChannel(std::shared_ptr<grpc::Channel> ch, ClientOptions o, std::string members)
    : ch_(std::move(ch)),
      kv_(etcdserverpb::KV::NewStub(ch_)),
      lease_(etcdserverpb::Lease::NewStub(ch_)),
      watch_(etcdserverpb::Watch::NewStub(ch_)),
      auth_(etcdserverpb::Auth::NewStub(ch_)),
      options_(std::move(o)),
      members_(std::move(members)) {}

Status EtcdChannel::open(const EtcdUrl& url, std::shared_ptr<EtcdChannel>& out) {
    std::string why;
    std::string target = target_of(url.members, why);
    if (target.empty()) return Status::error(errc::invalid_url, why);
    auto creds = credentials(url.options, why);
    if (!why.empty()) return Status::error(errc::tls_failed, why);
    grpc::ChannelArguments args;
    // A member that dies under an idle stream is noticed within seconds (etcd accepts pings
    // every 5 s or slower by default).
    args.SetInt(GRPC_ARG_KEEPALIVE_TIME_MS, 10000);
    args.SetInt(GRPC_ARG_KEEPALIVE_TIMEOUT_MS, 3000);
    args.SetInt(GRPC_ARG_KEEPALIVE_PERMIT_WITHOUT_CALLS, 1);
    args.SetInt(GRPC_ARG_INITIAL_RECONNECT_BACKOFF_MS,
                static_cast<int>(url.options.reconnect_min.count()) + 1);
    args.SetInt(GRPC_ARG_MAX_RECONNECT_BACKOFF_MS,
                static_cast<int>(url.options.reconnect_max.count()) + 1);
    if (url.options.tls.enabled) args.SetSslTargetNameOverride(url.members.front().host);
    std::string members;
    for (const auto& m : url.members) members += (members.empty() ? "" : ",") + m.describe();
    auto ch = grpc::CreateCustomChannel(target, creds, args);
    std::shared_ptr<EtcdChannel> c(new EtcdChannel(ch, url.options, members));
    auto by = Clock::now() + url.options.connect_timeout;
    // Connected, or every member failed once (the channel's first TRANSIENT_FAILURE: each
    // refused the connection or spoke no gRPC): a wrong address must not cost the whole
    // connect timeout.
    auto state = ch->GetState(true);
    while (state != GRPC_CHANNEL_READY && state != GRPC_CHANNEL_TRANSIENT_FAILURE &&
           state != GRPC_CHANNEL_SHUTDOWN && ch->WaitForStateChange(state, grpc_deadline(by)))
        state = ch->GetState(true);
    if (state != GRPC_CHANNEL_READY) {
        std::string tls = url.options.tls.enabled ? ", and its TLS certificates (ca, cert, key)"
                                                  : " (members that speak only TLS need etcds://)";
        if (state == GRPC_CHANNEL_TRANSIENT_FAILURE)
            return Status::error(
                errc::connect_failed,
                fmt::format("no etcd member of {} could be reached: each refused the "
                            "connection or does not speak etcd's gRPC; check the addresses, "
                            "the ports (etcd's client port, 2379 by default) and that etcd "
                            "runs{}",
                            members, tls));
        return Status::error(
            errc::connect_failed,
            fmt::format("no etcd member of {} answered within {} ms: check the addresses and "
                        "that etcd runs{}",
                        members, url.options.connect_timeout.count(), tls));
    }
    if (!url.options.username.empty())
        if (Status st = c->authenticate(by); !st.ok()) return st;
    // One read proves the member speaks etcd's API and that the user may read.
    etcdserverpb::RangeRequest probe;
    probe.set_key(url.options.key_prefix.empty() ? std::string(1, '\0') : url.options.key_prefix);
    probe.set_limit(1);
    probe.set_keys_only(true);
    etcdserverpb::RangeResponse r;
    if (Status st =
            c->call([&](grpc::ClientContext& ctx) { return c->kv().Range(&ctx, probe, &r); },
                    by + url.options.command_timeout, "a first read", Sent::read);
        !st.ok())
        return st;
    out = std::move(c);
    return {};
}

Status EtcdChannel::authenticate(Clock::time_point by) {
    etcdserverpb::AuthenticateRequest req;
    req.set_name(options_.username);
    req.set_password(options_.password);
    etcdserverpb::AuthenticateResponse r;
    grpc::ClientContext ctx;
    ctx.set_deadline(grpc_deadline(by));
    grpc::Status s = auth_->Authenticate(&ctx, req, &r);
    if (!s.ok()) return failed(s, "authenticating as " + options_.username, Sent::read);
    std::lock_guard lk(m_);
    token_ = r.token();
    return {};
}

void EtcdChannel::add_token(grpc::ClientContext& ctx) {
    std::lock_guard lk(m_);
    if (!token_.empty()) ctx.AddMetadata("token", token_);
}

void EtcdChannel::prepare_stream(grpc::ClientContext& ctx) {
    add_token(ctx);
    ctx.AddMetadata("hasleader", "true");
}

Status EtcdChannel::call(const std::function<grpc::Status(grpc::ClientContext&)>& rpc,
                         Clock::time_point by, std::string_view what, Sent sent) {
    for (int round = 0;; ++round) {
        grpc::ClientContext ctx;
        ctx.set_deadline(grpc_deadline(by));
        add_token(ctx);
        grpc::Status s = rpc(ctx);
        if (s.ok()) return {};
        // Simple tokens expire (5 min by default): one more try with a fresh one.
        if (round == 0 && !options_.username.empty() && says(s, "invalid auth token"))
            if (authenticate(by).ok()) continue;
        return failed(s, what, sent);
    }
}

Status EtcdChannel::failed(const grpc::Status& s, std::string_view what, Sent sent) const {
    const std::string& msg = s.error_message();
    auto error = [&](errc e, std::string_view advice) {
        return Status::error(e, fmt::format("{} on etcd ({}) failed: {}{}{}", what, members_, msg,
                                            advice.empty() ? "" : "; ", advice));
    };
    switch (s.error_code()) {
        case grpc::StatusCode::UNAUTHENTICATED:
            return error(errc::auth_failed, "check the user and password in the URL");
        case grpc::StatusCode::PERMISSION_DENIED:
            return error(errc::permission_denied,
                         "grant the user's role readwrite on the lock names' keys (etcdctl "
                         "role grant-permission --prefix)");
        case grpc::StatusCode::INVALID_ARGUMENT:
        case grpc::StatusCode::FAILED_PRECONDITION:
            if (says(s, "authentication failed") || says(s, "user name is empty"))
                return error(errc::auth_failed, "check the user and password in the URL");
            // The server's setting, not the caller's mistake: a refusal, not a usage error.
            if (says(s, "authentication is not enabled"))
                return error(errc::auth_failed,
                             "this etcd runs without authentication: drop user:password from "
                             "the URL, or turn it on (etcdctl auth enable)");
            return error(errc::invalid_argument, "");
        case grpc::StatusCode::RESOURCE_EXHAUSTED:
            return error(errc::out_of_memory,
                         "etcd's space quota is full (alarm NOSPACE): compact and defragment it");
        case grpc::StatusCode::DEADLINE_EXCEEDED:
            if (sent == Sent::write)
                return error(errc::unknown_outcome, "the request may have been applied");
            return error(errc::timeout, "");
        case grpc::StatusCode::UNAVAILABLE:
            if (says(s, "no leader"))
                return error(errc::no_quorum, "a majority of members is down");
            if (says(s, "failed to connect") || says(s, "Connection refused"))
                return error(errc::connect_failed, "");
            if (sent == Sent::write)
                return error(errc::unknown_outcome, "the request may have been applied");
            return error(errc::connection_lost, "");
        case grpc::StatusCode::CANCELLED:
            return error(errc::cancelled, "");
        default:
            if (says(s, "no leader") || says(s, "leader changed"))
                return error(sent == Sent::write ? errc::unknown_outcome : errc::no_quorum, "");
            return error(errc::server_error, "");
    }
}

Status EtcdChannel::txn(const etcdserverpb::TxnRequest& req, etcdserverpb::TxnResponse& out,
                        Clock::time_point by, std::string_view what, Sent sent) {
    return call([&](grpc::ClientContext& c) { return kv_->Txn(&c, req, &out); }, by, what, sent);
}

void EtcdChannel::async_txn(
    etcdserverpb::TxnRequest req, Clock::time_point by, std::string what, Sent sent,
    std::function<void(Status, std::shared_ptr<etcdserverpb::TxnResponse>)> done) {
    struct Call {
        grpc::ClientContext ctx;
        etcdserverpb::TxnRequest req;
        std::shared_ptr<etcdserverpb::TxnResponse> out =
            std::make_shared<etcdserverpb::TxnResponse>();
    };
    auto call = std::make_shared<Call>();
    call->req = std::move(req);
    call->ctx.set_deadline(grpc_deadline(by));
    add_token(call->ctx);
    kv_->async()->Txn(
        &call->ctx, &call->req, call->out.get(),
        [self = shared_from_this(), call, by, what = std::move(what), sent,
         done = std::move(done)](const grpc::Status& s) mutable {
            // An expired token: the blocking way, once, with a fresh one.
            if (!s.ok() && !self->options_.username.empty() && says(s, "invalid auth token")) {
                Status st = self->txn(call->req, *call->out, by, what, sent);
                done(std::move(st), call->out);
                return;
            }
            done(s.ok() ? Status{} : self->failed(s, what, sent), call->out);
        });
}

Status EtcdChannel::range(const etcdserverpb::RangeRequest& req, etcdserverpb::RangeResponse& out,
                          Clock::time_point by, std::string_view what) {
    return call([&](grpc::ClientContext& c) { return kv_->Range(&c, req, &out); }, by, what,
                Sent::read);
}

}  // namespace deadbolt::detail
