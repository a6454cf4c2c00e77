def summarize(rows):
    total = sum(row["amount"] for row in rows)
    print("total: %s" % total)
    return total
