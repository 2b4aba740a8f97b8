import HuddleIO
import HuddleProtocol

/// The channels the client follows: subscribes, their replies and resumes (used by
/// HuddleClient+Channels and on every reconnect).
extension HuddleClient {
    /// Tracks `channel` from `since` and sends a subscribe; its reply's publications are
    /// delivered as events before `completion` runs.
    func subscribe(channel: String, since: Position?, completion: @escaping (Result<SubscribeResult, HuddleClientError>) -> Void) {
        guard state != .stopped else {
            completion(.failure(.closed))
            return
        }
        ledger.track(channel, since: since)
        // Safe to repeat: a resent subscribe resumes from what was delivered meanwhile.
        submit(OutgoingRequest(.subscribe(channel: channel, since: nil), deadline: deadline(), onLoss: .resend) { [self] outcome in
            switch outcome {
            case .success(let result):
                completion(subscribed(channel, result: result))
            case .failure(let error):
                if ledger.entries[channel]?.confirmed == false { ledger.untrack(channel) }
                completion(.failure(error))
            }
        })
    }

    /// Stops tracking `channel` at once (later publications are not delivered) and unsubscribes.
    func unsubscribe(channel: String, completion: @escaping (Result<Void, HuddleClientError>) -> Void) {
        ledger.untrack(channel)
        request(.unsubscribe(channel: channel), decode: { _ throws(HuddleClientError) in () }) { outcome in
            // Over a lost connection the subscription is gone anyway: the next connection does not resume it.
            if case .failure(.connectionLost) = outcome {
                completion(.success(()))
            } else {
                completion(outcome)
            }
        }
    }

    /// A subscribe reply: delivers the replayed publications, then moves the channel's
    /// position to its latest offset.
    func subscribed(_ channel: String, result: JSONValue) -> Result<SubscribeResult, HuddleClientError> {
        do throws(WireFormatError) {
            let subscription = try Subscription(result: result, channel: channel)
            let (epoch, offset, recovered) = (subscription.epoch, subscription.offset, subscription.recovered)
            var delivered = 0
            var gap = false
            for publication in subscription.publications {
                switch ledger.offer(channel: channel, epoch: epoch, offset: publication.offset, replayed: true) {
                case .deliver:
                    delivered += 1
                    emit(.publication(publication))
                case .gap:
                    gap = true
                case .duplicate, .untracked:
                    continue
                }
                if gap { break }
            }
            let current = subscription.current
            if gap {
                resync(channel)
            } else {
                ledger.subscribed(channel: channel, epoch: epoch, offset: offset)
                // After what was replayed, as the place it leads to.
                if let current, ledger.isTracked(channel) { emit(.whereabouts(current)) }
            }
            return .success(SubscribeResult(
                channel: channel, epoch: epoch, offset: offset, recovered: recovered, delivered: delivered, current: current))
        } catch {
            return .failure(.invalidReply(error.reason))
        }
    }

    /// Resubscribes `channel` from its position: after a reconnect, or a gap noticed in the
    /// live stream. The reply replays what was missed, or says it cannot.
    func resume(_ channel: String) {
        let request = OutgoingRequest(.subscribe(channel: channel, since: nil), deadline: .max, onLoss: .drop) { [self] outcome in
            switch outcome {
            case .success(let result):
                switch subscribed(channel, result: result) {
                case .success(let subscription):
                    if let recovered = subscription.recovered, ledger.isTracked(channel) {
                        emit(.recovered(channel: channel, recovered: recovered))
                    }
                case .failure(let error):
                    ledger.untrack(channel)
                    emit(.subscriptionEnded(channel: channel, error: error))
                }
            case .failure(.server(code: "rate_limited", _, let retryAfter)):
                resumesDue.append((channel, MonotonicClock.milliseconds() + (retryAfter ?? 1000)))
            case .failure(let error):
                guard ledger.isTracked(channel) else { return }
                ledger.untrack(channel)
                emit(.subscriptionEnded(channel: channel, error: error))
            }
        }
        transmit(request)
    }

    func resync(_ channel: String) {
        guard state == .ready, ledger.isTracked(channel) else { return }
        ledger.beginResync(channel)
        resume(channel)
    }
}
