//! Client-side partition assignors of the classic protocol: the group
//! leader runs one over every member's subscription and sends the result
//! in SyncGroup.
//!
//! - [`range`] (Java's `RangeAssignor`): per topic, consecutive ranges of
//!   partitions to the subscribed members in order.
//! - [`cooperative_sticky`] (Java's `CooperativeStickyAssignor`): balanced,
//!   keeps partitions with their owners, and never hands a partition owned
//!   by one member directly to another: it is left out for one rebalance,
//!   the owner revokes it and rejoins, and the follow-up rebalance assigns
//!   it (incremental cooperative rebalancing, KIP-429).
//!
//! ```
//! use kafka_consumer::internals::classic::assignor::{Assignor, MemberSubscription, range};
//! use std::collections::BTreeMap;
//! let members = [MemberSubscription::new("a", ["t"]), MemberSubscription::new("b", ["t"])];
//! let partitions = BTreeMap::from([("t".to_string(), 3)]);
//! let out = range(&members, &partitions);
//! assert_eq!(out["a"]["t"].len(), 2);
//! assert_eq!(out["b"]["t"].len(), 1);
//! assert_eq!(Assignor::from_config("range"), Some(Assignor::Range));
//! ```

use std::collections::{BTreeMap, BTreeSet};

/// Partitions by topic name.
pub type Partitions = BTreeMap<String, BTreeSet<i32>>;

/// What a member sent in its JoinGroup metadata (Java's `Subscription`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MemberSubscription {
    /// The member id.
    pub member_id: String,
    /// `group.instance.id` of a static member.
    pub instance_id: Option<String>,
    /// The subscribed topics.
    pub topics: BTreeSet<String>,
    /// The partitions the member owns now (cooperative members).
    pub owned: Partitions,
    /// The generation in which it got them (-1: none).
    pub generation: i32,
}

impl MemberSubscription {
    /// A member subscribed to `topics`, owning nothing.
    ///
    /// ```
    /// use kafka_consumer::internals::classic::assignor::MemberSubscription;
    /// // A member of a cooperative group says what it owns, so it keeps it.
    /// let m = MemberSubscription::new("m-1", ["orders", "refunds"]).owning("orders", [0, 1]);
    /// assert_eq!(m.topics.len(), 2);
    /// ```
    pub fn new<S: Into<String>>(member_id: &str, topics: impl IntoIterator<Item = S>) -> Self {
        Self {
            member_id: member_id.into(),
            instance_id: None,
            topics: topics.into_iter().map(Into::into).collect(),
            owned: Partitions::new(),
            generation: -1,
        }
    }

    /// The same member, also owning `partitions` of `topic`.
    pub fn owning(mut self, topic: &str, partitions: impl IntoIterator<Item = i32>) -> Self {
        self.owned
            .entry(topic.into())
            .or_default()
            .extend(partitions);
        self
    }
}

/// An assignor named in `partition.assignment.strategy`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Assignor {
    /// Java's `RangeAssignor` (`range`), eager.
    Range,
    /// Java's `CooperativeStickyAssignor` (`cooperative-sticky`).
    CooperativeSticky,
}

impl Assignor {
    /// Java's default `partition.assignment.strategy`.
    pub const DEFAULT: [Assignor; 2] = [Assignor::Range, Assignor::CooperativeSticky];

    /// The protocol name in JoinGroup.
    pub fn name(self) -> &'static str {
        match self {
            Assignor::Range => "range",
            Assignor::CooperativeSticky => "cooperative-sticky",
        }
    }

    /// Parses a Java class name or short name.
    pub fn from_config(name: &str) -> Option<Self> {
        match name.trim() {
            "range" | "org.apache.kafka.clients.consumer.RangeAssignor" => Some(Assignor::Range),
            "cooperative-sticky"
            | "org.apache.kafka.clients.consumer.CooperativeStickyAssignor" => {
                Some(Assignor::CooperativeSticky)
            }
            _ => None,
        }
    }

    /// Parses a protocol name chosen by the coordinator.
    pub fn from_name(name: &str) -> Option<Self> {
        [Assignor::Range, Assignor::CooperativeSticky]
            .into_iter()
            .find(|a| a.name() == name)
    }

    /// True for assignors of the cooperative rebalance protocol (KIP-429).
    pub fn is_cooperative(self) -> bool {
        self == Assignor::CooperativeSticky
    }

    /// Runs the assignor: member id → its partitions (every member appears).
    pub fn assign(
        self,
        members: &[MemberSubscription],
        partitions: &BTreeMap<String, i32>,
    ) -> BTreeMap<String, Partitions> {
        match self {
            Assignor::Range => range(members, partitions),
            Assignor::CooperativeSticky => cooperative_sticky(members, partitions),
        }
    }
}

/// Java's member order: static members first (by instance id), then the
/// others by member id.
fn member_order(a: &MemberSubscription, b: &MemberSubscription) -> std::cmp::Ordering {
    match (&a.instance_id, &b.instance_id) {
        (Some(x), Some(y)) => x.cmp(y).then_with(|| a.member_id.cmp(&b.member_id)),
        (Some(_), None) => std::cmp::Ordering::Less,
        (None, Some(_)) => std::cmp::Ordering::Greater,
        (None, None) => a.member_id.cmp(&b.member_id),
    }
}

fn empty_result(members: &[MemberSubscription]) -> BTreeMap<String, Partitions> {
    members
        .iter()
        .map(|m| (m.member_id.clone(), Partitions::new()))
        .collect()
}

/// Java's `RangeAssignor`: for each topic, its partitions in order are cut
/// into consecutive ranges, one per subscribed member in
/// [Java's member order](MemberSubscription); the first `P mod C` members get
/// one partition more. Topics missing from `partitions` are skipped.
///
/// ```
/// use kafka_consumer::internals::classic::assignor::{MemberSubscription, range};
/// use std::collections::BTreeMap;
/// // Java's documented example: C0, C1 on t0, t1 with 3 partitions each.
/// let members = [MemberSubscription::new("C0", ["t0", "t1"]), MemberSubscription::new("C1", ["t0", "t1"])];
/// let p = BTreeMap::from([("t0".to_string(), 3), ("t1".to_string(), 3)]);
/// let out = range(&members, &p);
/// assert_eq!(out["C0"]["t0"].iter().copied().collect::<Vec<_>>(), [0, 1]);
/// assert_eq!(out["C1"]["t1"].iter().copied().collect::<Vec<_>>(), [2]);
/// ```
pub fn range(
    members: &[MemberSubscription],
    partitions: &BTreeMap<String, i32>,
) -> BTreeMap<String, Partitions> {
    let mut out = empty_result(members);
    let mut ordered: Vec<&MemberSubscription> = members.iter().collect();
    ordered.sort_by(|a, b| member_order(a, b));
    let topics: BTreeSet<&String> = members.iter().flat_map(|m| &m.topics).collect();
    for topic in topics {
        let Some(&count) = partitions.get(topic) else {
            continue;
        };
        let subscribed: Vec<&&MemberSubscription> = ordered
            .iter()
            .filter(|m| m.topics.contains(topic))
            .collect();
        let c = subscribed.len() as i32;
        let (per, extra) = (count / c, count % c);
        let mut next = 0;
        for (i, m) in subscribed.into_iter().enumerate() {
            let n = per + i32::from((i as i32) < extra);
            if n > 0 {
                out.get_mut(&m.member_id)
                    .expect("every member has an entry")
                    .insert(topic.clone(), (next..next + n).collect());
            }
            next += n;
        }
    }
    out
}

/// Java's `CooperativeStickyAssignor`, in this order:
///
/// 1. Ownership: a partition claimed by several members belongs to the
///    claim of the highest generation; a tie at that generation leaves it
///    unowned (as Java does). Claims of partitions that no longer exist or
///    of topics the member left are dropped.
/// 2. Stickiness: every member keeps what it owns; unowned partitions go to
///    the subscribed member with the fewest partitions.
/// 3. Balance: while a member can take a partition from one holding at
///    least two more, the partition moves (from the fullest member, taking
///    first what it did not own before). With equal subscriptions the
///    counts end up differing by at most one, and a member owning no more
///    than `⌊P/C⌋` keeps all it owned.
/// 4. Cooperation: a partition that moves away from its owner is left out
///    of the new owner's assignment; the owner revokes it and rejoins, and
///    the follow-up rebalance assigns it.
///
/// ```
/// use kafka_consumer::internals::classic::assignor::{MemberSubscription, cooperative_sticky};
/// use std::collections::BTreeMap;
/// let p = BTreeMap::from([("t".to_string(), 4)]);
/// // "a" owned all four; "b" joins.
/// let first = cooperative_sticky(
///     &[MemberSubscription::new("a", ["t"]).owning("t", 0..4), MemberSubscription::new("b", ["t"])],
///     &p,
/// );
/// assert_eq!(first["a"]["t"].len(), 2, "a keeps two and revokes two");
/// assert!(first["b"].is_empty(), "b gets nothing until a revoked");
/// // The follow-up rebalance: a owns its two, b takes the other two.
/// let a_owns = first["a"]["t"].clone();
/// let second = cooperative_sticky(
///     &[MemberSubscription::new("a", ["t"]).owning("t", a_owns.iter().copied()), MemberSubscription::new("b", ["t"])],
///     &p,
/// );
/// assert_eq!(second["a"], first["a"]);
/// assert_eq!(second["b"]["t"].len(), 2);
/// ```
pub fn cooperative_sticky(
    members: &[MemberSubscription],
    partitions: &BTreeMap<String, i32>,
) -> BTreeMap<String, Partitions> {
    type Tp = (String, i32);
    let exists = |t: &str, p: i32| partitions.get(t).is_some_and(|n| p >= 0 && p < *n);
    let by_id: BTreeMap<&str, &MemberSubscription> =
        members.iter().map(|m| (m.member_id.as_str(), m)).collect();
    // 1. Ownership.
    let mut claims: BTreeMap<Tp, Vec<(i32, &str)>> = BTreeMap::new();
    for m in members {
        for (t, ps) in &m.owned {
            if !m.topics.contains(t) {
                continue;
            }
            for p in ps {
                if exists(t, *p) {
                    claims
                        .entry((t.clone(), *p))
                        .or_default()
                        .push((m.generation, m.member_id.as_str()));
                }
            }
        }
    }
    let mut previous: BTreeMap<Tp, &str> = BTreeMap::new();
    for (tp, mut c) in claims {
        c.sort_by_key(|x| std::cmp::Reverse(x.0));
        if c.len() == 1 || c[0].0 > c[1].0 {
            previous.insert(tp, c[0].1);
        }
    }
    // 2. Stickiness.
    let mut holding: BTreeMap<&str, BTreeSet<Tp>> =
        by_id.keys().map(|id| (*id, BTreeSet::new())).collect();
    for (tp, owner) in &previous {
        holding
            .get_mut(owner)
            .expect("owner is a member")
            .insert(tp.clone());
    }
    let all: Vec<Tp> = partitions
        .iter()
        .filter(|(t, _)| members.iter().any(|m| m.topics.contains(*t)))
        .flat_map(|(t, n)| (0..*n).map(move |p| (t.clone(), p)))
        .collect();
    let eligible = |tp: &Tp| -> Vec<&str> {
        members
            .iter()
            .filter(|m| m.topics.contains(&tp.0))
            .map(|m| m.member_id.as_str())
            .collect()
    };
    for tp in &all {
        if previous.contains_key(tp) {
            continue;
        }
        let best = eligible(tp)
            .into_iter()
            .min_by_key(|id| (holding[id].len(), *id))
            .expect("a subscribed member exists");
        holding.get_mut(best).expect("member").insert(tp.clone());
    }
    // 3. Balance.
    loop {
        let mut fullest: Vec<&str> = holding.keys().copied().collect();
        fullest.sort_by_key(|id| (std::cmp::Reverse(holding[id].len()), *id));
        let mut moved = None;
        'search: for giver in fullest {
            let count = holding[giver].len();
            // What it did not own before goes first, then the rest.
            let mut candidates: Vec<&Tp> = holding[giver].iter().collect();
            candidates.sort_by_key(|tp| previous.get(*tp) == Some(&giver));
            for tp in candidates {
                let taker = eligible(tp)
                    .into_iter()
                    .filter(|id| holding[id].len() + 1 < count)
                    .min_by_key(|id| (holding[id].len(), *id));
                if let Some(taker) = taker {
                    moved = Some((giver, taker, tp.clone()));
                    break 'search;
                }
            }
        }
        let Some((giver, taker, tp)) = moved else {
            break;
        };
        holding.get_mut(giver).expect("member").remove(&tp);
        holding.get_mut(taker).expect("member").insert(tp);
    }
    // 4. Cooperation.
    let mut out = empty_result(members);
    for (id, tps) in holding {
        let mine = out.get_mut(id).expect("member");
        for tp in tps {
            if previous.get(&tp).is_some_and(|owner| *owner != id) {
                continue;
            }
            mine.entry(tp.0).or_default().insert(tp.1);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn parts(out: &BTreeMap<String, Partitions>, m: &str, t: &str) -> Vec<i32> {
        out[m]
            .get(t)
            .map(|s| s.iter().copied().collect())
            .unwrap_or_default()
    }

    /// `partition.assignment.strategy` takes Java's class names and the
    /// short names; an assignor this client lacks is refused.
    #[test]
    fn assignors_are_named_as_in_java() {
        let a =
            Assignor::from_config("org.apache.kafka.clients.consumer.CooperativeStickyAssignor");
        assert_eq!(a, Some(Assignor::CooperativeSticky));
        assert_eq!(
            Assignor::from_config("org.apache.kafka.clients.consumer.RangeAssignor"),
            Some(Assignor::Range)
        );
        assert_eq!(Assignor::from_config("range"), Some(Assignor::Range));
        assert_eq!(Assignor::from_config("roundrobin"), None);
        assert_eq!(Assignor::Range.name(), "range");
        assert_eq!(Assignor::CooperativeSticky.name(), "cooperative-sticky");
        assert_eq!(
            Assignor::from_name("cooperative-sticky"),
            Some(Assignor::CooperativeSticky)
        );
    }

    /// Java's default list: range first, then cooperative-sticky (so a
    /// group can move to cooperative rebalancing one member at a time).
    #[test]
    fn the_default_assignors_put_range_first() {
        assert_eq!(
            Assignor::DEFAULT,
            [Assignor::Range, Assignor::CooperativeSticky]
        );
    }

    /// Only cooperative-sticky follows the cooperative protocol (KIP-429).
    #[test]
    fn only_cooperative_sticky_is_cooperative() {
        assert!(Assignor::CooperativeSticky.is_cooperative());
        assert!(!Assignor::Range.is_cooperative());
    }

    /// `owning` records the partitions a member held, per topic.
    #[test]
    fn owning_records_the_held_partitions() {
        let m = MemberSubscription::new("m-1", ["orders"]).owning("orders", [0, 1]);
        assert_eq!(m.topics.len(), 1);
        assert_eq!(
            parts(&BTreeMap::from([("m".to_string(), m.owned)]), "m", "orders"),
            [0, 1]
        );
    }

    /// A lone member gets every partition of its topic, whichever assignor.
    #[test]
    fn a_lone_member_gets_every_partition() {
        let p = BTreeMap::from([("t".to_string(), 2)]);
        for a in Assignor::DEFAULT {
            let out = a.assign(&[MemberSubscription::new("a", ["t"])], &p);
            assert_eq!(parts(&out, "a", "t"), [0, 1], "{a:?}");
        }
    }

    #[test]
    fn range_gives_the_first_members_one_extra_partition_per_topic() {
        // Java's RangeAssignor documentation: C0 gets t0p0, t0p1, t1p0, t1p1;
        // C1 gets t0p2, t1p2.
        let m = [
            MemberSubscription::new("C0", ["t0", "t1"]),
            MemberSubscription::new("C1", ["t0", "t1"]),
        ];
        let p = BTreeMap::from([("t0".to_string(), 3), ("t1".to_string(), 3)]);
        let out = range(&m, &p);
        assert_eq!(parts(&out, "C0", "t0"), [0, 1]);
        assert_eq!(parts(&out, "C0", "t1"), [0, 1]);
        assert_eq!(parts(&out, "C1", "t0"), [2]);
        assert_eq!(parts(&out, "C1", "t1"), [2]);
    }

    #[test]
    fn range_orders_static_members_first_and_skips_unsubscribed_topics() {
        let mut s = MemberSubscription::new("z", ["t"]);
        s.instance_id = Some("i".into());
        let m = [MemberSubscription::new("a", ["t", "u"]), s];
        let p = BTreeMap::from([("t".to_string(), 3), ("u".to_string(), 2)]);
        let out = range(&m, &p);
        assert_eq!(parts(&out, "z", "t"), [0, 1], "static member first");
        assert_eq!(parts(&out, "a", "t"), [2]);
        assert_eq!(parts(&out, "a", "u"), [0, 1], "only a subscribes to u");
    }

    #[test]
    fn range_leaves_members_beyond_the_partition_count_empty() {
        let m = [
            MemberSubscription::new("a", ["t"]),
            MemberSubscription::new("b", ["t"]),
            MemberSubscription::new("c", ["t"]),
        ];
        let out = range(&m, &BTreeMap::from([("t".to_string(), 2)]));
        assert_eq!(parts(&out, "a", "t"), [0]);
        assert_eq!(parts(&out, "b", "t"), [1]);
        assert!(out["c"].is_empty());
    }

    /// Member `id`, subscribed to `t`, claiming `t`-0 from `generation`.
    fn claims_t0(id: &str, generation: i32) -> MemberSubscription {
        let mut m = MemberSubscription::new(id, ["t"]).owning("t", [0]);
        m.generation = generation;
        m
    }

    #[test]
    fn sticky_conflicting_claims_go_to_the_highest_generation() {
        let old = claims_t0("a", 1);
        let new = claims_t0("b", 2);
        let out = cooperative_sticky(&[old, new], &BTreeMap::from([("t".to_string(), 2)]));
        assert_eq!(parts(&out, "b", "t"), [0], "the newer claim keeps it");
        assert_eq!(parts(&out, "a", "t"), [1]);
    }

    #[test]
    fn sticky_a_tie_of_claims_leaves_the_partition_to_be_assigned_directly() {
        let a = claims_t0("a", 3);
        let b = claims_t0("b", 3);
        let out = cooperative_sticky(&[a, b], &BTreeMap::from([("t".to_string(), 2)]));
        let total: usize = out
            .values()
            .map(|p| p.values().map(BTreeSet::len).sum::<usize>())
            .sum();
        assert_eq!(total, 2, "both partitions assigned in this round");
    }

    #[test]
    fn sticky_drops_claims_of_deleted_partitions_and_unsubscribed_topics() {
        let a = MemberSubscription::new("a", ["t"])
            .owning("t", [0, 7])
            .owning("gone", [0]);
        let out = cooperative_sticky(&[a], &BTreeMap::from([("t".to_string(), 2)]));
        assert_eq!(parts(&out, "a", "t"), [0, 1]);
        assert!(!out["a"].contains_key("gone"));
    }

    fn set(out: &BTreeMap<String, Partitions>, m: &str) -> BTreeSet<(String, i32)> {
        out[m]
            .iter()
            .flat_map(|(t, ps)| ps.iter().map(move |p| (t.clone(), *p)))
            .collect()
    }

    fn tps(list: &[(&str, i32)]) -> BTreeSet<(String, i32)> {
        list.iter().map(|(t, p)| (t.to_string(), *p)).collect()
    }

    #[test]
    fn sticky_matches_javas_documented_example() {
        // Java's StickyAssignor documentation: C0, C1, C2 subscribed to
        // t0..t3 of two partitions each; then C1 leaves and the others keep
        // what they had.
        let topics = ["t0", "t1", "t2", "t3"];
        let p: BTreeMap<String, i32> = topics.iter().map(|t| (t.to_string(), 2)).collect();
        let first = cooperative_sticky(
            &[
                MemberSubscription::new("C0", topics),
                MemberSubscription::new("C1", topics),
                MemberSubscription::new("C2", topics),
            ],
            &p,
        );
        assert_eq!(set(&first, "C0"), tps(&[("t0", 0), ("t1", 1), ("t3", 0)]));
        assert_eq!(set(&first, "C1"), tps(&[("t0", 1), ("t2", 0), ("t3", 1)]));
        assert_eq!(set(&first, "C2"), tps(&[("t1", 0), ("t2", 1)]));
        let owning = |id: &str| {
            let mut m = MemberSubscription::new(id, topics);
            m.owned = first[id].clone();
            m.generation = 1;
            m
        };
        let second = cooperative_sticky(&[owning("C0"), owning("C2")], &p);
        assert_eq!(
            set(&second, "C0"),
            tps(&[("t0", 0), ("t1", 1), ("t3", 0), ("t2", 0)])
        );
        assert_eq!(
            set(&second, "C2"),
            tps(&[("t1", 0), ("t2", 1), ("t0", 1), ("t3", 1)])
        );
    }

    /// Random subscriptions (each member on a random non-empty subset of
    /// the topics) and random ownership.
    fn uneven_group() -> impl Strategy<Value = (Vec<MemberSubscription>, BTreeMap<String, i32>)> {
        (group(), prop::collection::vec(1u8..16, 7)).prop_map(
            |((mut members, partitions), masks)| {
                let topics: Vec<&String> = partitions.keys().collect();
                for (i, m) in members.iter_mut().enumerate() {
                    let mine: BTreeSet<String> = topics
                        .iter()
                        .enumerate()
                        .filter(|(k, _)| masks[i] & (1 << k) != 0)
                        .map(|(_, t)| t.to_string())
                        .collect();
                    m.topics = if mine.is_empty() {
                        BTreeSet::from([topics[0].clone()])
                    } else {
                        mine
                    };
                }
                (members, partitions)
            },
        )
    }

    /// A random group: `n` members on the same topics, each owning a
    /// disjoint random share of the partitions from the previous generation.
    fn group() -> impl Strategy<Value = (Vec<MemberSubscription>, BTreeMap<String, i32>)> {
        (1usize..7, prop::collection::vec(0i32..9, 1..4)).prop_flat_map(|(n, counts)| {
            let partitions: BTreeMap<String, i32> = counts
                .iter()
                .enumerate()
                .map(|(i, c)| (format!("t{i}"), *c))
                .collect();
            let total: usize = counts.iter().map(|c| *c as usize).sum();
            // owner index per partition (n = unowned)
            let owners = prop::collection::vec(0..=n, total);
            (Just(n), Just(partitions), owners).prop_map(|(n, partitions, owners)| {
                let topics: Vec<String> = partitions.keys().cloned().collect();
                let mut members: Vec<MemberSubscription> = (0..n)
                    .map(|i| {
                        let mut m = MemberSubscription::new(&format!("m{i}"), topics.clone());
                        m.generation = 5;
                        m
                    })
                    .collect();
                let mut k = 0;
                for (t, c) in &partitions {
                    for p in 0..*c {
                        if owners[k] < n {
                            members[owners[k]] = members[owners[k]].clone().owning(t, [p]);
                        }
                        k += 1;
                    }
                }
                (members, partitions)
            })
        })
    }

    fn count(p: &Partitions) -> usize {
        p.values().map(BTreeSet::len).sum()
    }

    proptest! {
        #[test]
        fn sticky_is_complete_balanced_and_sticky((members, partitions) in group()) {
            let total: usize = partitions.values().map(|c| *c as usize).sum();
            let n = members.len();
            let first = cooperative_sticky(&members, &partitions);
            // Never hands an owned partition to another member directly.
            for m in &members {
                for (t, ps) in &first[&m.member_id] {
                    for p in ps {
                        for other in &members {
                            if other.member_id != m.member_id {
                                prop_assert!(!other.owned.get(t).is_some_and(|o| o.contains(p)),
                                    "{t}-{p} handed from {} to {}", other.member_id, m.member_id);
                            }
                        }
                    }
                }
            }
            // Stickiness: a member owning at most floor(P/C) keeps it all;
            // one owning more keeps at least floor(P/C).
            let floor = total / n;
            for m in &members {
                let kept = m.owned.iter().map(|(t, ps)| {
                    ps.iter().filter(|p| first[&m.member_id].get(t).is_some_and(|a| a.contains(p))).count()
                }).sum::<usize>();
                prop_assert!(kept >= count(&m.owned).min(floor), "{} kept {kept} of {:?}", m.member_id, m.owned);
            }
            // The owners revoke what they lost; the follow-up rebalance
            // completes the assignment.
            let next: Vec<MemberSubscription> = members.iter().map(|m| {
                let mut s = MemberSubscription::new(&m.member_id, m.topics.iter().cloned());
                s.generation = 6;
                s.owned = first[&m.member_id].clone();
                s
            }).collect();
            let second = cooperative_sticky(&next, &partitions);
            // Exactly once.
            let mut seen = BTreeSet::new();
            for a in second.values() {
                for (t, ps) in a {
                    for p in ps {
                        prop_assert!(seen.insert((t.clone(), *p)), "{t}-{p} assigned twice");
                    }
                }
            }
            prop_assert_eq!(seen.len(), total, "every partition assigned");
            // Balance.
            let counts: Vec<usize> = second.values().map(count).collect();
            let (lo, hi) = (counts.iter().min().unwrap(), counts.iter().max().unwrap());
            prop_assert!(hi - lo <= 1, "counts {counts:?}");
            // The second round moves nothing the first one kept.
            for m in &members {
                for (t, ps) in &first[&m.member_id] {
                    prop_assert!(ps.is_subset(second[&m.member_id].get(t).unwrap_or(&BTreeSet::new())));
                }
            }
        }

        #[test]
        fn sticky_with_uneven_subscriptions_assigns_each_subscribed_partition_once(
            (members, partitions) in uneven_group()
        ) {
            // Cooperative rebalances repeat while partitions are revoked (the
            // member rejoins after revoking). With uneven subscriptions the
            // balance is best effort: the rounds must reach a fixpoint within
            // a few rounds, and there every subscribed partition is assigned
            // once, to a subscriber.
            let mut owned: Vec<MemberSubscription> = members.clone();
            let mut rounds = 0;
            let last = loop {
                let out = cooperative_sticky(&owned, &partitions);
                rounds += 1;
                let stable = owned.iter().all(|m| {
                    let mine: Partitions = m.owned.iter()
                        .filter(|(t, ps)| m.topics.contains(*t) && !ps.is_empty())
                        .map(|(t, ps)| (t.clone(), ps.clone()))
                        .collect();
                    out[&m.member_id] == mine
                });
                if stable {
                    break out;
                }
                prop_assert!(rounds < 6, "no fixpoint after {rounds} rounds");
                owned = owned.iter().map(|m| {
                    let mut s = m.clone();
                    s.generation += 1;
                    s.owned = out[&m.member_id].clone();
                    s
                }).collect();
            };
            let mut seen = BTreeSet::new();
            for m in &members {
                for (t, ps) in &last[&m.member_id] {
                    prop_assert!(m.topics.contains(t), "{} got {t} it does not subscribe to", m.member_id);
                    for p in ps {
                        prop_assert!(seen.insert((t.clone(), *p)), "{t}-{p} assigned twice");
                    }
                }
            }
            let wanted: usize = partitions
                .iter()
                .filter(|(t, _)| members.iter().any(|m| m.topics.contains(*t)))
                .map(|(_, c)| *c as usize)
                .sum();
            prop_assert_eq!(seen.len(), wanted);
        }

        #[test]
        fn range_is_complete_and_balanced_per_topic((members, partitions) in group()) {
            let out = range(&members, &partitions);
            for (t, c) in &partitions {
                let counts: Vec<usize> = out.values().map(|a| a.get(t).map_or(0, BTreeSet::len)).collect();
                prop_assert_eq!(counts.iter().sum::<usize>(), *c as usize);
                prop_assert!(counts.iter().max().unwrap() - counts.iter().min().unwrap() <= 1);
            }
        }
    }
}
