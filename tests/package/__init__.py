"""The package as a whole: version, facade, kernel selection and the test harness itself
(foundation), the sdist and wheel contents (packaging), the public API and the documentation."""
