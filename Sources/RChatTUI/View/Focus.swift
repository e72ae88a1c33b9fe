/// Where keys go.
public enum Focus: Equatable, Sendable, CaseIterable {
    case list, conversation, composer

    var next: Focus {
        switch self { case .composer: .conversation; case .conversation: .list; case .list: .composer }
    }
    var previous: Focus {
        switch self { case .composer: .list; case .list: .conversation; case .conversation: .composer }
    }
}
