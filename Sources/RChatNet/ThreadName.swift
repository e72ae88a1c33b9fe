import CEpoll

/// Names the calling thread for the kernel (`top -H`, `perf`, /proc/…/comm): Foundation's
/// `Thread.name` does not reach it on Linux. At most 15 bytes are kept.
public enum ThreadName {
    public static func setCurrent(_ name: String) {
        rchat_name_thread(name)
    }
}
