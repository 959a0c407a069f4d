// EtcdChannel: one gRPC channel to an etcd cluster (any member; gRPC moves to another when
// one fails), its stubs, the auth token, and what a failed call means in deadbolt's terms.
// Every unary call goes through call(), which gives it a deadline and the token.
#pragma once

#include <grpcpp/grpcpp.h>

#include <chrono>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>

#include "backends/etcd/url.hpp"
#include "core/status.hpp"
#include "etcd/etcdserver/etcdserverpb/rpc.grpc.pb.h"

namespace deadbolt::detail {

using Clock = std::chrono::steady_clock;

/// Whether a failed request may have been applied (a write whose reply was lost).
enum class Sent : unsigned char { read, write };

class EtcdChannel : public std::enable_shared_from_this<EtcdChannel> {
  public:
    /// A channel to url's members, authenticated when the URL names a user, proven by one
    /// read. Fails with connect_failed (no member answered within connect_timeout),
    /// auth_failed, tls_failed or invalid_url (a member's name does not resolve).
    static Status open(const EtcdUrl& url, std::shared_ptr<EtcdChannel>& out);

    etcdserverpb::KV::Stub& kv() { return *kv_; }
    etcdserverpb::Lease::Stub& lease() { return *lease_; }
    etcdserverpb::Watch::Stub& watch() { return *watch_; }

    /// Runs rpc(context) once with deadline by and the auth token; again once with a fresh
    /// token when the server says the token expired. The failure as a Status (what: the
    /// request in words, for the message).
    Status call(const std::function<grpc::Status(grpc::ClientContext&)>& rpc, Clock::time_point by,
                std::string_view what, Sent sent);
    /// One Txn through call().
    Status txn(const etcdserverpb::TxnRequest& req, etcdserverpb::TxnResponse& out,
               Clock::time_point by, std::string_view what, Sent sent);
    /// One Txn without blocking: done(status, response) runs once, on a gRPC thread (it
    /// must not block), when the answer or the failure comes.
    void async_txn(etcdserverpb::TxnRequest req, Clock::time_point by, std::string what, Sent sent,
                   std::function<void(Status, std::shared_ptr<etcdserverpb::TxnResponse>)> done);
    /// One Range through call().
    Status range(const etcdserverpb::RangeRequest& req, etcdserverpb::RangeResponse& out,
                 Clock::time_point by, std::string_view what);
    /// Prepares ctx for a long-lived stream: the token, and "hasleader" so that a member cut
    /// off from the quorum ends the stream instead of keeping it silent.
    void prepare_stream(grpc::ClientContext& ctx);
    /// What a failed call means: the code deadbolt reports and a message with what to do.
    Status failed(const grpc::Status& s, std::string_view what, Sent sent) const;

    /// One command's deadline from now.
    Clock::time_point deadline() const { return Clock::now() + options_.command_timeout; }
    const ClientOptions& options() const { return options_; }
    /// The members, for messages.
    const std::string& describe() const { return members_; }

  private:
    EtcdChannel(std::shared_ptr<grpc::Channel> ch, ClientOptions o, std::string members);
    Status authenticate(Clock::time_point by);
    void add_token(grpc::ClientContext& ctx);

    std::shared_ptr<grpc::Channel> ch_;
    std::unique_ptr<etcdserverpb::KV::Stub> kv_;
    std::unique_ptr<etcdserverpb::Lease::Stub> lease_;
    std::unique_ptr<etcdserverpb::Watch::Stub> watch_;
    std::unique_ptr<etcdserverpb::Auth::Stub> auth_;
    const ClientOptions options_;
    const std::string members_;
    std::mutex m_;
    std::string token_;  // empty without auth
};

/// system_clock deadline for gRPC from a steady_clock one.
std::chrono::system_clock::time_point grpc_deadline(Clock::time_point by);

}  // namespace deadbolt::detail
