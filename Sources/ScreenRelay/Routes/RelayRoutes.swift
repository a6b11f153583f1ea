import Hummingbird

/// One group of the relay's HTTP routes (a controller, as Hummingbird calls it): it holds only what its handlers
/// use, and adds them to the relay's router (``RelayServer`` builds the router from these groups).
protocol RelayRoutes: Sendable {
    func addRoutes(to router: Router<RelayRequestContext>)
}
