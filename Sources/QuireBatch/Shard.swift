import Glibc
import QuireCore

/// Which share of a batch this run takes: shard `index` of `count` (0-based). An item belongs to
/// the shard its stable content hash falls in, so shards never depend on the order or names of
/// the inputs, and any number of runs over the same inputs split the same way.
public struct Shard: Sendable, Equatable, CustomStringConvertible {
    public var index: Int
    public var count: Int

    public static let whole = Shard(index: 0, count: 1)

    public init(index: Int, count: Int) {
        self.index = index
        self.count = count
    }

    public var description: String { "\(index)/\(count)" }

    /// `K/N` with 0 ≤ K < N.
    public init(parsing text: String) throws {
        let parts = text.split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count == 2, let index = Int(parts[0]), let count = Int(parts[1]), count >= 1, index >= 0, index < count else {
            throw QuireError.usage("--shard needs K/N with 0 ≤ K < N (such as 0/4), or auto; not '\(text)'")
        }
        self.init(index: index, count: count)
    }

    /// Whether an item with this key (a hex digest) is this shard's.
    public func owns(key: String) -> Bool {
        guard count > 1 else { return true }
        let value = UInt64(key.prefix(15), radix: 16) ?? 0
        return Int(value % UInt64(count)) == index
    }

    /// The variables `fromScheduler` reads.
    public static let schedulerVariables = [
        "SLURM_ARRAY_TASK_ID", "SLURM_ARRAY_TASK_MIN", "SLURM_ARRAY_TASK_MAX", "SLURM_ARRAY_TASK_STEP", "SLURM_ARRAY_TASK_COUNT",
        "JOB_COMPLETION_INDEX", "QUIRE_SHARD_COUNT", "AWS_BATCH_JOB_ARRAY_INDEX", "AWS_BATCH_JOB_ARRAY_SIZE", "BATCH_TASK_INDEX", "BATCH_TASK_COUNT",
    ]

    /// `fromScheduler` on this process's environment.
    public static func fromEnvironment(countOverride: Int? = nil) throws -> Shard {
        var environment: [String: String] = [:]
        for name in schedulerVariables { environment[name] = SystemEnvironment.variable(name) }
        return try fromScheduler(environment, countOverride: countOverride)
    }

    /// The shard a cluster scheduler gave this task, from its environment: Slurm job arrays,
    /// Kubernetes Indexed Jobs (the count from `countOverride` or QUIRE_SHARD_COUNT), AWS Batch
    /// array jobs and Google Cloud Batch. Throws `usage` with the reason when none is found or
    /// the numbering cannot be turned into K/N.
    public static func fromScheduler(_ environment: [String: String], countOverride: Int? = nil) throws -> Shard {
        func number(_ name: String) throws -> Int? {
            guard let text = environment[name] else { return nil }
            guard let value = Int(text.filter { $0 != " " }) else {
                throw QuireError.usage("--shard auto: \(name)='\(text)' is not a number")
            }
            return value
        }
        func checked(_ index: Int, _ count: Int, _ scheduler: String) throws -> Shard {
            guard count >= 1, index >= 0, index < count else {
                throw QuireError.usage("--shard auto: \(scheduler) gives task \(index) of \(count), which is not a shard")
            }
            return Shard(index: index, count: count)
        }
        if let id = try number("SLURM_ARRAY_TASK_ID") {
            guard let minimum = try number("SLURM_ARRAY_TASK_MIN"), let maximum = try number("SLURM_ARRAY_TASK_MAX"),
                let count = try number("SLURM_ARRAY_TASK_COUNT")
            else {
                throw QuireError.usage("--shard auto: SLURM_ARRAY_TASK_ID is set but SLURM_ARRAY_TASK_MIN, _MAX or _COUNT is missing")
            }
            let step = try number("SLURM_ARRAY_TASK_STEP") ?? 1
            // A list such as --array=1,4,5 has COUNT 3 but MIN 1, MAX 5, STEP 1: no index follows.
            guard step >= 1, (maximum - minimum) % step == 0, (maximum - minimum) / step + 1 == count, (id - minimum) % step == 0 else {
                throw QuireError.usage(
                    "--shard auto: this Slurm array (min \(minimum), max \(maximum), step \(step), count \(count)) is not an even range, so task \(id) has no shard number; use --array=0-N or a stepped range, or pass --shard K/N"
                )
            }
            return try checked((id - minimum) / step, count, "Slurm")
        }
        if let index = try number("JOB_COMPLETION_INDEX") {
            guard let count = try countOverride ?? number("QUIRE_SHARD_COUNT") else {
                throw QuireError.usage("--shard auto: a Kubernetes Indexed Job does not say how many completions it has; pass --shard-count N or set QUIRE_SHARD_COUNT")
            }
            return try checked(index, count, "Kubernetes")
        }
        if let index = try number("AWS_BATCH_JOB_ARRAY_INDEX") {
            guard let count = try number("AWS_BATCH_JOB_ARRAY_SIZE") else {
                throw QuireError.usage("--shard auto: AWS_BATCH_JOB_ARRAY_INDEX is set but AWS_BATCH_JOB_ARRAY_SIZE is not")
            }
            return try checked(index, count, "AWS Batch")
        }
        if let index = try number("BATCH_TASK_INDEX") {
            guard let count = try number("BATCH_TASK_COUNT") else {
                throw QuireError.usage("--shard auto: BATCH_TASK_INDEX is set but BATCH_TASK_COUNT is not")
            }
            return try checked(index, count, "Google Cloud Batch")
        }
        throw QuireError.usage(
            "--shard auto found no scheduler: none of SLURM_ARRAY_TASK_ID, JOB_COMPLETION_INDEX, AWS_BATCH_JOB_ARRAY_INDEX or BATCH_TASK_INDEX is set; pass --shard K/N")
    }
}
