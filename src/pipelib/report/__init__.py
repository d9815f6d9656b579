"""Reports: the result-row schema, paper tables as views of result rows, the privacy ledger, pages."""
