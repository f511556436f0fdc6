//! `toy` (unit tests only): a method declared in one file and listed once in
//! [`ALL`](super::ALL), to show that nothing else is needed for it to be parsed, listed in the
//! command line's help and Python's `METHODS`, checked and built.

use induce_baselines::{RandomConfig, RandomExplainer};
use induce_explain::{Explainer, Explanation};
use induce_graph::Graph;

use super::{Describe, Kind, MethodDecl, Needs, Schedule, Supports};

/// `toy`'s declaration.
pub(super) const DECL: MethodDecl = MethodDecl {
    name: "toy",
    aliases: &["toy-method"],
    summary: "one random deletion mask (a unit test's method)",
    kind: Kind::Baseline,
    default_run: false,
    supports: Supports::DELETING_BASELINE,
    needs: Needs::NONE,
    seeded: true,
    adds_edges: false,
    edit_mode: None,
    schedule: Schedule::None,
    settings: &["iterations"],
    build: |b| {
        let config = RandomConfig {
            iterations: 1,
            ..b.baselines.random.clone()
        };
        Ok(Box::new(Toy(RandomExplainer::new(
            b.black_box,
            config,
            b.protocol,
        ))))
    },
    describe: |_: &Describe<'_>| Some("one random deletion mask".into()),
};

struct Toy<'a>(RandomExplainer<'a>);

impl Explainer for Toy<'_> {
    fn name(&self) -> &str {
        DECL.name
    }

    fn explain(&self, graph: &Graph, target: u32) -> induce_explain::Result<Explanation> {
        self.0.explain(graph, target)
    }

    fn neighbourhood_hops(&self) -> Option<u32> {
        self.0.neighbourhood_hops()
    }
}

#[cfg(test)]
mod tests {
    use super::super::{ALL, Method, method_help};

    #[test]
    fn a_method_declared_once_appears_everywhere() {
        let toy: Method = "toy".parse().unwrap();
        assert_eq!("toy-method".parse::<Method>().unwrap(), toy);
        // Python's METHODS reads the names of `Method::all()`.
        assert!(Method::all().contains(&toy));
        assert_eq!(ALL.last().unwrap().name, "toy");
        // The command line's --method help lists every declaration with its summary.
        let help = method_help();
        assert!(help.contains("toy: one random deletion mask"), "{help}");
        // Its settings are checked like any method's.
        let chosen = ["iterations".to_string()];
        assert!(crate::methods::check_settings(&[toy], &chosen).is_ok());
        let e = crate::methods::check_settings(&[toy], &["shortlist".into()]).unwrap_err();
        assert!(e.to_string().contains("read by greedy"), "{e}");
    }
}
