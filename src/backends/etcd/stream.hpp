// BidiStream: one of etcd's long-lived gRPC streams (KeepAlive, Watch), opened when first
// written to and again after it breaks, with one reader thread that hands every message to
// on_message and tells on_broken when the stream ends (whatever was pending on it is lost).
#pragma once

#include <grpcpp/grpcpp.h>

#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>

#include "backends/etcd/channel.hpp"

namespace deadbolt::detail {

template <class Req, class Resp>
class BidiStream {
  public:
    using Rw = grpc::ClientReaderWriter<Req, Resp>;
    using Open = std::function<std::unique_ptr<Rw>(grpc::ClientContext&)>;

    BidiStream(std::shared_ptr<EtcdChannel> ch, Open open,
               std::function<void(const Resp&)> on_message, std::function<void()> on_broken)
        : ch_(std::move(ch)),
          open_(std::move(open)),
          on_message_(std::move(on_message)),
          on_broken_(std::move(on_broken)),
          reader_([this] { read_loop(); }) {}

    ~BidiStream() { close(); }
    BidiStream(const BidiStream&) = delete;
    BidiStream& operator=(const BidiStream&) = delete;

    /// Ends the stream and joins the reader: no on_message or on_broken after this returns.
    /// The owner calls it before letting go of its pointer, because a message read as the
    /// stream closes may still write through that pointer (and must find it, refused).
    void close() {
        {
            std::lock_guard lk(m_);
            stop_ = true;
            if (ctx_) ctx_->TryCancel();
        }
        cv_.notify_all();
        if (reader_.joinable()) reader_.join();
    }
    /// Sends req, opening the stream first when there is none; false when it cannot be sent
    /// (the stream is broken: on_broken follows from the reader).
    bool write(const Req& req) {
        std::lock_guard lk(m_);
        if (stop_) return false;
        if (!rw_) {
            ctx_ = std::make_shared<grpc::ClientContext>();
            ch_->prepare_stream(*ctx_);
            rw_ = std::shared_ptr<Rw>(open_(*ctx_).release());
            cv_.notify_all();
        }
        return rw_->Write(req);
    }

  private:
    void read_loop() {
        for (;;) {
            std::shared_ptr<Rw> rw;
            std::shared_ptr<grpc::ClientContext> ctx;
            {
                std::unique_lock lk(m_);
                cv_.wait(lk, [&] { return stop_ || (rw_ && !reading_); });
                if (stop_ && !rw_) return;
                rw = rw_;
                ctx = ctx_;
                reading_ = true;
            }
            for (Resp r; rw->Read(&r);) on_message_(r);
            {
                // No write is under way on rw now (writes hold m_), and none will begin.
                std::lock_guard lk(m_);
                rw_.reset();
                ctx_.reset();
                reading_ = false;
            }
            rw->Finish().ok();  // why it ended matters less than that it did
            on_broken_();
            std::lock_guard lk(m_);
            if (stop_) return;
        }
    }

    std::shared_ptr<EtcdChannel> ch_;
    Open open_;
    std::function<void(const Resp&)> on_message_;
    std::function<void()> on_broken_;
    std::mutex m_;
    std::condition_variable cv_;
    bool stop_ = false;
    bool reading_ = false;
    std::shared_ptr<grpc::ClientContext> ctx_;  // rw_'s
    std::shared_ptr<Rw> rw_;
    std::thread reader_;  // last: it uses everything above
};

}  // namespace deadbolt::detail
