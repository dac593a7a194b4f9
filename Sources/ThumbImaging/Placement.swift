/// Where something shorter than its room sits along one axis: the arithmetic
/// that `gravity` and `fp` share (SPEC §3.1, §3.4). Used both ways round: the
/// room is the scaled image and the thing the `cover` window, or the room is
/// the `contain` canvas and the thing the scaled image.
enum Placement: Equatable, Sendable {
    /// At the left or top edge.
    case start
    /// floor(slack / 2): the SPEC's centring, which leaves the odd pixel after the thing.
    case middle
    /// At the right or bottom edge.
    case end

    /// The offset of the thing when the room is `slack` (≥ 0) pixels longer.
    func offset(slack: Int) -> Int {
        switch self {
        case .start: 0
        case .middle: slack / 2
        case .end: slack
        }
    }

    /// The offset that puts the point `thousandths`/1000 of `room` as near the
    /// middle of a `length`-pixel window as the room allows:
    /// clamp(round(X·room − length/2), 0, room − length), half away from zero.
    ///
    /// Exact in integers: X·room − length/2 is n/2000 with
    /// n = 2·thousandths·room − 1000·length, so a half is a half: 0.285·200 − 50.5
    /// is 6.5 and gives 7, where 0.285 as a Double times 200 falls just short and gives 6.
    static func focused(thousandths: Int, room: Int, length: Int) -> Int {
        precondition(length <= room, "window longer than its room")
        let n = 2 * thousandths * room - 1000 * length
        let rounded = n >= 0 ? (n + 1000) / 2000 : -((-n + 1000) / 2000)
        return min(max(rounded, 0), room - length)
    }
}

extension Gravity {
    /// Where this gravity puts a thing along the x axis; `attention` (whose
    /// point is placed by `Placement.focused` once known) is centred meanwhile.
    var horizontal: Placement {
        switch self {
        case .west, .northwest, .southwest: .start
        case .east, .northeast, .southeast: .end
        case .center, .north, .south, .attention: .middle
        }
    }

    /// Where this gravity puts a thing along the y axis (north is the top).
    var vertical: Placement {
        switch self {
        case .north, .northwest, .northeast: .start
        case .south, .southwest, .southeast: .end
        case .center, .east, .west, .attention: .middle
        }
    }
}
