@testable import HuddleCore
import HuddleProtocol
import Testing

/// The place decision on its own (protocol.md, "How the place is decided"): geometry, entering
/// and leaving with hysteresis, overlapping places, noisy edges, stray fixes, traveling, regions.
@Suite struct LocationDecisionTests {
    typealias Current = LocationState.Current
    static let start = CoreHarness.startTime

    /// Applies the fixes in order; returns the decided place after each, and the final state.
    private func decide(_ fixes: [LocationFix], places: [Place], from initial: LocationState = LocationState()) -> ([Current], LocationState) {
        var state = initial
        var currents: [Current] = []
        for fix in fixes {
            state = LocationDecision.state(after: fix, from: state, places: places, at: fix.time)
            currents.append(state.current)
        }
        return (currents, state)
    }

    /// The sequence without repeats: what a follower sees.
    private func changes(_ currents: [Current], from initial: Current = .unknown) -> [Current] {
        var seen: [Current] = []
        var last = initial
        for current in currents where current != last {
            seen.append(current)
            last = current
        }
        return seen
    }

    @Test func haversineMatchesKnownDistances() {
        #expect(abs(GeoDistance.metres(48.8566, 2.3522, 51.5074, -0.1278) - 343_556.53) < 0.01, "Paris to London")
        #expect(abs(GeoDistance.metres(0, 0, 1, 0) - 111_195.08) < 0.01, "one degree of a meridian")
        #expect(abs(GeoDistance.metres(90, 0, -90, 0) - 20_015_114.44) < 0.01, "pole to pole, no NaN")
        #expect(GeoDistance.metres(12.5, -70, 12.5, -70) == 0)
        let home = SimulatedFixes.place(1, "home", radius: 100)
        #expect(abs(GeoDistance.metres(from: SimulatedFixes.exact(east: 300, north: 400, accuracy: 5, time: 0), to: home) - 500) < 0.01)
    }

    @Test func enteringNeedsConfidenceAndLeavingNeedsClearance() {
        let home = SimulatedFixes.place(1, "home", radius: 100)
        func fix(_ distance: Double, _ accuracy: Double) -> LocationFix {
            SimulatedFixes.exact(east: distance, accuracy: accuracy, time: 0)
        }
        #expect(LocationDecision.enters(fix(80, 20), home), "80 + 10 ≤ 100")
        #expect(!LocationDecision.enters(fix(95, 20), home), "95 + 10 > 100: inside, but not surely")
        #expect(LocationDecision.enters(fix(0, 200), home), "at the centre, 200 m is still decisive")
        #expect(!LocationDecision.enters(fix(0, 201), home), "coarser than max(r, 200 m)")
        #expect(!LocationDecision.leaves(fix(135, 20), home), "135 − 20 is within r + 20 m")
        #expect(LocationDecision.leaves(fix(145, 20), home), "145 − 20 > 120")
        #expect(!LocationDecision.leaves(fix(5_000, 250), home), "a coarse fix leaves nothing")
        let city = SimulatedFixes.place(2, "city", radius: 5_000)
        #expect(LocationDecision.hysteresis(of: city) == 500)
        #expect(!LocationDecision.leaves(fix(5_540, 50), city) && LocationDecision.leaves(fix(5_560, 50), city))
        #expect(LocationDecision.leaves(fix(9_000, 3_000), city), "a place of 5 km takes fixes of 3 km")
    }

    @Test func theSmallestPlaceAFixEntersWins() {
        let campus = SimulatedFixes.place(1, "campus", radius: 1_000)
        let library = SimulatedFixes.place(2, "library", radius: 50)
        let cafe = SimulatedFixes.place(3, "cafe", east: 600, radius: 300)
        let places = [campus, library, cafe]
        var time = Self.start
        func at(_ east: Double, _ north: Double) -> LocationFix {
            time += 15_000
            return SimulatedFixes.exact(east: east, north: north, accuracy: 10, time: time)
        }
        // Campus alone, then the library inside it (smaller, and the campus was not left), then
        // out of the library to where the cafe and the campus overlap: the cafe, being smaller.
        let (currents, _) = decide([at(0, 700), at(0, 700), at(0, 0), at(0, 0), at(400, 0), at(400, 0), at(1_300, 0), at(1_300, 0)], places: places)
        #expect(currents == [.place(id: 1), .place(id: 1), .place(id: 1), .place(id: 2), .place(id: 2), .place(id: 3), .place(id: 3), .unknown])
        // Equal radii: the older place.
        let twin = SimulatedFixes.place(4, "twin", radius: 50)
        #expect(LocationDecision.narrowestEntered(by: at(0, 0), [twin, library])?.id == 2)
    }

    @Test func aNoisyEdgeNeverFlaps() {
        let home = SimulatedFixes.place(1, "home", radius: 100)
        var fixes = SimulatedFixes(seed: 1)
        // Standing right on the edge for over an hour: the user may be found inside once, and is
        // never let out again.
        let onTheEdge = (0..<300).map { fixes.fix(east: 100, time: Self.start + Int64($0) * 15_000) }
        let (edge, _) = decide(onTheEdge, places: [home])
        #expect(changes(edge).count <= 1)
        #expect(!edge.contains(.traveling))
        // Between "surely inside" and "surely out", a fix changes nothing either way.
        let inTheBand = (0..<300).map { fixes.fix(east: 112, time: Self.start + Int64($0) * 15_000) }
        #expect(decide(inTheBand, places: [home]).0.allSatisfy { $0 == .unknown })
        var atHome = LocationState()
        atHome.current = .place(id: 1)
        let stayingIn = (0..<300).map { fixes.fix(east: 115, time: Self.start + Int64($0) * 15_000) }
        #expect(decide(stayingIn, places: [home], from: atHome).0.allSatisfy { $0 == .place(id: 1) })
    }

    @Test func walkingOutOfAPlaceChangesOnceAndNeverTravels() {
        let home = SimulatedFixes.place(1, "home", radius: 100)
        for seed in UInt64(1)...20 {
            var fixes = SimulatedFixes(seed: seed)
            // 1.4 m/s for 400 m, a fix every 10 s.
            let walk = (0...285).map { step in fixes.fix(east: Double(step) * 1.4, time: Self.start + Int64(step) * 10_000) }
            let (currents, _) = decide(walk, places: [home])
            #expect(changes(currents) == [.place(id: 1), .unknown], "seed \(seed)")
        }
    }

    @Test func oneStrayFixMovesNobody() {
        let home = SimulatedFixes.place(1, "home", radius: 100)
        let work = SimulatedFixes.place(2, "work", east: 500, radius: 100)
        var time = Self.start
        func at(_ east: Double) -> LocationFix {
            time += 10_000
            return SimulatedFixes.exact(east: east, accuracy: 10, time: time)
        }
        // Multipath: one fix 500 m off (at work, even) with a confident accuracy, then back.
        let (currents, _) = decide([at(0), at(0), at(500), at(0), at(0), at(-500), at(0)], places: [home, work])
        #expect(currents.allSatisfy { $0 == .place(id: 1) })
        // Two in a row do move the user.
        #expect(decide([at(0), at(0), at(500), at(500)], places: [home, work]).0.last == .place(id: 2))
    }

    @Test func drivingIsTravelingUntilArrivalOrAStop() {
        let home = SimulatedFixes.place(1, "home", radius: 100)
        let shop = SimulatedFixes.place(2, "shop", east: 3_000, radius: 100)
        let work = SimulatedFixes.place(3, "work", east: 9_000, radius: 150)
        var time = Self.start
        var east = 0.0
        var fixes: [LocationFix] = []
        func report(every seconds: Int64 = 10) {
            time += seconds * 1_000
            fixes.append(SimulatedFixes.exact(east: east, accuracy: 10, time: time))
        }
        report(); report()
        // 15 m/s past the shop to 6 km; a red light of 40 s on the way.
        while east < 6_000 {
            east += 150
            report()
            if east == 4_500 { for _ in 0..<4 { report() } }
        }
        let drove = fixes.count
        // Parked away from any place for 3 minutes.
        for _ in 0..<18 { report() }
        let parked = fixes.count
        // On to work and into it.
        while east < 9_000 {
            east += 150
            report()
        }
        for _ in 0..<3 { report() }
        let (currents, state) = decide(fixes, places: [home, shop, work])
        #expect(currents[1] == .place(id: 1))
        #expect(changes(Array(currents[..<drove])) == [.place(id: 1), .traveling], "the shop and the red light are no stops")
        let stop = Array(currents[drove..<parked])
        #expect(stop.prefix(11).allSatisfy { $0 == .traveling } && stop.last == .unknown, "2 minutes without speed: unknown")
        #expect(changes(Array(currents[parked...]), from: .unknown) == [.traveling, .place(id: 3)])
        #expect(state.track.count == LocationDecision.trackLength)
    }

    @Test func aWildFixOutAndBackIsNoJourney() {
        var time = Self.start
        func at(_ east: Double) -> LocationFix {
            time += 10_000
            return SimulatedFixes.exact(east: east, accuracy: 10, time: time)
        }
        let (currents, state) = decide([at(0), at(0), at(800), at(0)], places: [])
        #expect(!currents.contains(.traveling))
        #expect(state.lastFastTime == time, "the way back was fast, and counts as evidence for later")
    }

    @Test func regionEventsAreTrusted() {
        var state = LocationState()
        state = LocationDecision.state(afterRegion: 2, entered: true, reportedAt: Self.start, from: state, at: Self.start + 5)
        #expect(state.current == .place(id: 2) && state.since == Self.start && state.track.isEmpty)
        let other = LocationDecision.state(afterRegion: 3, entered: false, reportedAt: Self.start + 10, from: state, at: Self.start + 10)
        #expect(other.current == .place(id: 2) && other.since == Self.start && other.lastObservationTime == Self.start + 10)
        let left = LocationDecision.state(afterRegion: 2, entered: false, reportedAt: Self.start + 20, from: other, at: Self.start + 15)
        #expect(left.current == .unknown && left.since == Self.start + 15, "since is never later than the server's clock")
    }
}
