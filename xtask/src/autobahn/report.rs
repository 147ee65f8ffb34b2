//! Reads the `index.json` that Autobahn|Testsuite 0.8.2 writes into its outdir and sums it up.
//!
//! Format (checked against real 0.8.2 runs): `{agent: {case id: {"behavior": .., "behaviorClose":
//! .., "duration": ms, "remoteCloseCode": int or null, "reportfile": "<agent>_case_<id>.json"}}}`.
//!
//! Autobahn judges each case twice. `behavior` (what was exchanged) is one of OK, NON-STRICT,
//! INFORMATIONAL, UNIMPLEMENTED (the compression cases 12.* / 13.* when permessage-deflate was
//! not negotiated) or FAILED. `behaviorClose` (the closing handshake) is one of OK,
//! INFORMATIONAL, WRONG CODE, FAILED BY CLIENT (the client, not the server, closed TCP),
//! UNCLEAN or FAILED. One outcome per case, the first rule that matches:
//!
//! 1. FAILED: `behavior` is FAILED (or any value not listed above), or `behaviorClose` is
//!    FAILED or UNCLEAN (or any value not listed above). UNCLEAN counts as a failure because
//!    Autobahn's own HTML report marks it red, as it does FAILED.
//! 2. NON-STRICT: `behavior` is NON-STRICT, or `behaviorClose` is WRONG CODE or FAILED BY
//!    CLIENT (the HTML report marks those as non-strict / almost).
//! 3. UNIMPLEMENTED, 4. INFORMATIONAL: after `behavior`.
//! 5. OK: `behavior` OK and `behaviorClose` OK or INFORMATIONAL.

use std::cmp::Ordering;
use std::fmt;

use serde_json::Value;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Outcome {
    Ok,
    NonStrict,
    Informational,
    Unimplemented,
    Failed,
}

impl Outcome {
    pub const ALL: [Outcome; 5] = [
        Outcome::Ok,
        Outcome::NonStrict,
        Outcome::Informational,
        Outcome::Unimplemented,
        Outcome::Failed,
    ];

    pub fn label(self) -> &'static str {
        match self {
            Outcome::Ok => "OK",
            Outcome::NonStrict => "NON-STRICT",
            Outcome::Informational => "INFORMATIONAL",
            Outcome::Unimplemented => "UNIMPLEMENTED",
            Outcome::Failed => "FAILED",
        }
    }

    fn index(self) -> usize {
        self as usize
    }
}

/// The rule documented at the top of this file.
pub fn classify(behavior: &str, behavior_close: &str) -> Outcome {
    let behavior_known = matches!(
        behavior,
        "OK" | "NON-STRICT" | "INFORMATIONAL" | "UNIMPLEMENTED"
    );
    let close_acceptable = matches!(
        behavior_close,
        "OK" | "INFORMATIONAL" | "WRONG CODE" | "FAILED BY CLIENT"
    );
    if !behavior_known || !close_acceptable {
        return Outcome::Failed;
    }
    if behavior == "NON-STRICT" || matches!(behavior_close, "WRONG CODE" | "FAILED BY CLIENT") {
        return Outcome::NonStrict;
    }
    match behavior {
        "UNIMPLEMENTED" => Outcome::Unimplemented,
        "INFORMATIONAL" => Outcome::Informational,
        _ => Outcome::Ok,
    }
}

#[derive(Debug)]
pub struct Case {
    pub id: String,
    pub behavior: String,
    pub behavior_close: String,
    pub remote_close_code: Option<i64>,
    pub outcome: Outcome,
}

impl fmt::Display for Case {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} (behavior {}, close {}",
            self.id, self.behavior, self.behavior_close
        )?;
        match self.remote_close_code {
            Some(code) => write!(f, ", remote close code {code})"),
            None => write!(f, ", no remote close code)"),
        }
    }
}

#[derive(Debug)]
pub struct Summary {
    pub agent: String,
    /// Every case of the agent, sorted by case id (numerically: 2.9 before 2.10).
    pub cases: Vec<Case>,
    counts: [usize; 5],
}

impl Summary {
    /// Parses `index.json` text and picks the cases of `agent`.
    pub fn parse(index_json: &str, agent: &str) -> Result<Self, String> {
        let root: Value = serde_json::from_str(index_json)
            .map_err(|e| format!("index.json is not valid JSON: {e}"))?;
        let agents = root.as_object().ok_or("index.json is not a JSON object")?;
        let Some(entries) = agents.get(agent) else {
            let found: Vec<&str> = agents.keys().map(String::as_str).collect();
            return Err(format!(
                "index.json has no results for agent `{agent}` (agents found: {found:?})"
            ));
        };
        let entries = entries
            .as_object()
            .ok_or_else(|| format!("index.json: `{agent}` is not an object"))?;
        let mut cases: Vec<Case> = entries
            .iter()
            .map(|(id, entry)| {
                let text = |key: &str| entry[key].as_str().unwrap_or("<missing>").to_owned();
                let (behavior, behavior_close) = (text("behavior"), text("behaviorClose"));
                Case {
                    id: id.clone(),
                    outcome: classify(&behavior, &behavior_close),
                    remote_close_code: entry["remoteCloseCode"].as_i64(),
                    behavior,
                    behavior_close,
                }
            })
            .collect();
        cases.sort_by(|a, b| compare_case_ids(&a.id, &b.id));
        let mut counts = [0; 5];
        for case in &cases {
            counts[case.outcome.index()] += 1;
        }
        Ok(Self {
            agent: agent.to_owned(),
            cases,
            counts,
        })
    }

    pub fn count(&self, outcome: Outcome) -> usize {
        self.counts[outcome.index()]
    }

    pub fn with_outcome(&self, outcome: Outcome) -> impl Iterator<Item = &Case> {
        self.cases.iter().filter(move |c| c.outcome == outcome)
    }

    /// Problems that make the run fail: FAILED cases, fewer cases than expected.
    pub fn problems(&self, expected_cases: usize) -> Vec<String> {
        let mut problems = Vec::new();
        if self.cases.len() < expected_cases {
            problems.push(format!(
                "only {} of {expected_cases} expected cases were reported",
                self.cases.len()
            ));
        }
        let failed = self.count(Outcome::Failed);
        if failed > 0 {
            problems.push(format!("{failed} case(s) FAILED"));
        }
        problems
    }

    /// With permessage-deflate on, an UNIMPLEMENTED case (12.* / 13.*: compression was
    /// not negotiated) is a failure.
    pub fn unimplemented_problem(&self) -> Option<String> {
        let n = self.count(Outcome::Unimplemented);
        (n > 0).then(|| format!("{n} case(s) UNIMPLEMENTED with permessage-deflate on"))
    }

    /// Multi-line text: counts, then the failed and non-strict cases.
    pub fn render(&self) -> String {
        let mut out = format!("  {} cases for agent `{}`:", self.cases.len(), self.agent);
        for outcome in Outcome::ALL {
            out += &format!(" {} {},", outcome.label(), self.count(outcome));
        }
        out.pop();
        out.push('\n');
        for outcome in [Outcome::Failed, Outcome::NonStrict] {
            let list: Vec<&Case> = self.with_outcome(outcome).collect();
            if !list.is_empty() {
                out += &format!("  {}:\n", outcome.label());
                for case in list {
                    out += &format!("    {case}\n");
                }
            }
        }
        out
    }
}

/// Orders "1.1.2" < "1.1.10" < "2.1"; non-numeric parts compare as text.
pub fn compare_case_ids(a: &str, b: &str) -> Ordering {
    let mut left = a.split('.');
    let mut right = b.split('.');
    loop {
        match (left.next(), right.next()) {
            (None, None) => return Ordering::Equal,
            (None, Some(_)) => return Ordering::Less,
            (Some(_), None) => return Ordering::Greater,
            (Some(x), Some(y)) => {
                let order = match (x.parse::<u64>(), y.parse::<u64>()) {
                    (Ok(x), Ok(y)) => x.cmp(&y),
                    _ => x.cmp(y),
                };
                if order != Ordering::Equal {
                    return order;
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Hand-written in the shape of a real 0.8.2 index.json (keys sorted, indent 3).
    const FIXTURE: &str = r#"{
   "other-agent": {
      "1.1.1": {"behavior": "FAILED", "behaviorClose": "FAILED", "duration": 1, "remoteCloseCode": null, "reportfile": "other_agent_case_1_1_1.json"}
   },
   "tickwire": {
      "1.1.1": {"behavior": "OK", "behaviorClose": "OK", "duration": 2, "remoteCloseCode": 1000, "reportfile": "tickwire_case_1_1_1.json"},
      "1.1.10": {"behavior": "OK", "behaviorClose": "INFORMATIONAL", "duration": 1, "remoteCloseCode": 1000, "reportfile": "tickwire_case_1_1_10.json"},
      "1.1.2": {"behavior": "OK", "behaviorClose": "OK", "duration": 1, "remoteCloseCode": 1000, "reportfile": "tickwire_case_1_1_2.json"},
      "12.1.1": {"behavior": "UNIMPLEMENTED", "behaviorClose": "OK", "duration": 1, "remoteCloseCode": 1000, "reportfile": "tickwire_case_12_1_1.json"},
      "13.1.1": {"behavior": "UNIMPLEMENTED", "behaviorClose": "OK", "duration": 1, "remoteCloseCode": 1000, "reportfile": "tickwire_case_13_1_1.json"},
      "2.10": {"behavior": "FAILED", "behaviorClose": "OK", "duration": 3, "remoteCloseCode": 1000, "reportfile": "tickwire_case_2_10.json"},
      "2.9": {"behavior": "OK", "behaviorClose": "FAILED", "duration": 3, "remoteCloseCode": null, "reportfile": "tickwire_case_2_9.json"},
      "3.1": {"behavior": "OK", "behaviorClose": "UNCLEAN", "duration": 3, "remoteCloseCode": null, "reportfile": "tickwire_case_3_1.json"},
      "5.1": {"behavior": "OK", "behaviorClose": "WRONG CODE", "duration": 3, "remoteCloseCode": 1002, "reportfile": "tickwire_case_5_1.json"},
      "6.4.1": {"behavior": "NON-STRICT", "behaviorClose": "OK", "duration": 2003, "remoteCloseCode": 1007, "reportfile": "tickwire_case_6_4_1.json"},
      "7.1.6": {"behavior": "INFORMATIONAL", "behaviorClose": "INFORMATIONAL", "duration": 12, "remoteCloseCode": 1000, "reportfile": "tickwire_case_7_1_6.json"},
      "7.3.1": {"behavior": "OK", "behaviorClose": "FAILED BY CLIENT", "duration": 1, "remoteCloseCode": 1000, "reportfile": "tickwire_case_7_3_1.json"},
      "9.1.1": {"behavior": "NO_CLOSE", "behaviorClose": "OK", "duration": 1, "remoteCloseCode": 1000, "reportfile": "tickwire_case_9_1_1.json"},
      "9.1.2": {"behaviorClose": "OK", "duration": 1, "remoteCloseCode": 1000, "reportfile": "tickwire_case_9_1_2.json"}
   }
}"#;

    fn ids<'a>(cases: impl Iterator<Item = &'a Case>) -> Vec<&'a str> {
        cases.map(|c| c.id.as_str()).collect()
    }

    #[test]
    fn counts_each_case_once_by_the_documented_rule() {
        let summary = Summary::parse(FIXTURE, "tickwire").unwrap();
        assert_eq!(summary.cases.len(), 14);
        assert_eq!(summary.count(Outcome::Ok), 3);
        assert_eq!(summary.count(Outcome::NonStrict), 3);
        assert_eq!(summary.count(Outcome::Informational), 1);
        assert_eq!(summary.count(Outcome::Unimplemented), 2);
        assert_eq!(summary.count(Outcome::Failed), 5);
        let total: usize = Outcome::ALL.iter().map(|&o| summary.count(o)).sum();
        assert_eq!(total, summary.cases.len());
    }

    #[test]
    fn failed_if_either_judgement_failed() {
        let summary = Summary::parse(FIXTURE, "tickwire").unwrap();
        // 2.10: behavior FAILED; 2.9: close FAILED; 3.1: UNCLEAN; 9.1.1: unknown; 9.1.2: missing.
        assert_eq!(
            ids(summary.with_outcome(Outcome::Failed)),
            ["2.9", "2.10", "3.1", "9.1.1", "9.1.2"]
        );
        assert_eq!(
            ids(summary.with_outcome(Outcome::NonStrict)),
            ["5.1", "6.4.1", "7.3.1"]
        );
        assert_eq!(
            ids(summary.with_outcome(Outcome::Unimplemented)),
            ["12.1.1", "13.1.1"]
        );
    }

    #[test]
    fn classify_precedence() {
        assert_eq!(classify("OK", "OK"), Outcome::Ok);
        assert_eq!(classify("OK", "INFORMATIONAL"), Outcome::Ok);
        assert_eq!(classify("INFORMATIONAL", "OK"), Outcome::Informational);
        assert_eq!(classify("UNIMPLEMENTED", "OK"), Outcome::Unimplemented);
        assert_eq!(classify("UNIMPLEMENTED", "FAILED"), Outcome::Failed);
        assert_eq!(classify("UNIMPLEMENTED", "WRONG CODE"), Outcome::NonStrict);
        assert_eq!(classify("NON-STRICT", "UNCLEAN"), Outcome::Failed);
        assert_eq!(classify("FAILED", "OK"), Outcome::Failed);
    }

    #[test]
    fn sorts_case_ids_numerically() {
        let summary = Summary::parse(FIXTURE, "tickwire").unwrap();
        assert_eq!(
            ids(summary.cases.iter()),
            [
                "1.1.1", "1.1.2", "1.1.10", "2.9", "2.10", "3.1", "5.1", "6.4.1", "7.1.6", "7.3.1",
                "9.1.1", "9.1.2", "12.1.1", "13.1.1"
            ]
        );
        assert_eq!(compare_case_ids("1.1", "1.1.1"), Ordering::Less);
    }

    #[test]
    fn keeps_remote_close_code_including_null() {
        let summary = Summary::parse(FIXTURE, "tickwire").unwrap();
        let code = |id: &str| {
            summary
                .cases
                .iter()
                .find(|c| c.id == id)
                .unwrap()
                .remote_close_code
        };
        assert_eq!(code("5.1"), Some(1002));
        assert_eq!(code("2.9"), None);
    }

    #[test]
    fn problems_for_failures_and_missing_cases() {
        let summary = Summary::parse(FIXTURE, "tickwire").unwrap();
        let problems = summary.problems(517);
        assert_eq!(problems.len(), 2, "{problems:?}");
        assert!(problems[0].contains("only 14 of 517"));
        assert!(problems[1].contains("5 case(s) FAILED"));

        let clean = r#"{"tickwire": {"1.1.1": {"behavior": "OK", "behaviorClose": "OK", "duration": 2, "remoteCloseCode": 1000, "reportfile": "tickwire_case_1_1_1.json"}}}"#;
        let summary = Summary::parse(clean, "tickwire").unwrap();
        assert!(summary.problems(1).is_empty());
        assert_eq!(summary.problems(2).len(), 1);
        assert_eq!(summary.unimplemented_problem(), None);
        let with = Summary::parse(FIXTURE, "tickwire").unwrap();
        assert!(with.unimplemented_problem().unwrap().contains("2 case(s)"));
    }

    #[test]
    fn render_lists_counts_and_bad_cases() {
        let text = Summary::parse(FIXTURE, "tickwire").unwrap().render();
        assert!(text.contains(
            "14 cases for agent `tickwire`: OK 3, NON-STRICT 3, INFORMATIONAL 1, UNIMPLEMENTED 2, FAILED 5\n"
        ));
        assert!(text.contains("    2.9 (behavior OK, close FAILED, no remote close code)\n"));
        assert!(text.contains(
            "  NON-STRICT:\n    5.1 (behavior OK, close WRONG CODE, remote close code 1002)\n"
        ));
    }

    #[test]
    fn errors_on_missing_agent_or_bad_json() {
        let err = Summary::parse(FIXTURE, "nobody").unwrap_err();
        assert!(err.contains("no results for agent `nobody`"), "{err}");
        assert!(err.contains("other-agent"), "{err}");
        // What fuzzingclient writes when it could not connect to the server at all.
        assert!(Summary::parse("{}", "tickwire").is_err());
        assert!(Summary::parse("[1]", "tickwire").is_err());
        assert!(Summary::parse("{\"tickwire\": ", "tickwire").is_err());
    }
}
